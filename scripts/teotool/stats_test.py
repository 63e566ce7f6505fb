# SPDX-License-Identifier: GPL-2.0
"""The statistics keep the definitions of the benchmark's summary as the
bash benchmark computed them in awk and jq before the port: the expected
values below are what its awk functions (median, mwu, tvd) and its jq
program for cyclictest's percentiles printed for the same inputs."""

import unittest

from teotool import stats

# (values, the median the bash benchmark printed)
MEDIANS = [
    ([7, 1], 4),
    ([2.5, 3, 3, 1, 7, 400], 3),
    ([1, 10.25, 2.5, 2.5, 2], 2.5),
    ([2, 10.25, 7, 10.25, 400], 10.25),
    ([3, 400, 7, 11], 9),
    ([11], 11),
    ([2.5, 11, 400, 2.5, 10.25], 10.25),
    ([7, 400], 203.5),
    ([3, 11, 10.25, 3], 6.625),
    ([2], 2),
    ([7, 7, 11, 10.25, 11, 400, 7], 10.25),
    ([7, 400, 2.5, 7, 400, 1, 11], 7),
]
# (A, B, U of A over B, exact two-sided p), ties among them
MANN_WHITNEY = [
    ([400, 7], [11, 2], 3, 0.6666666667),
    ([2], [10.25, 2.5, 2, 400, 3], 0.5, 0.3333333333),
    ([11, 10.25], [2.5], 2, 0.6666666667),
    ([400, 2.5, 3, 11], [2, 11, 11], 7, 0.8571428571),
    ([11, 2, 2, 7, 7, 2.5], [2, 11], 5.5, 0.8571428571),
    ([400], [2.5, 1, 2, 3], 4, 0.4),
    ([10.25, 11, 2.5, 11], [7, 11, 3], 7, 0.8571428571),
    ([7], [10.25, 1, 7, 1, 7], 3, 1),
    ([11, 11, 11, 2, 11, 10.25], [10.25, 11, 3, 400, 1, 2.5], 22.5, 0.4848484848),
    ([10.25], [3], 1, 1),
    ([11, 1], [2.5], 1, 1),
    ([11, 3, 7, 7], [2], 4, 0.4),
]
# (A, B, TVD in percent)
TVD = [
    ([0, 1, 1000, 0, 5], [90, 5, 999, 0, 5], 8.544818441),
    ([1000, 80], [5, 0], 7.407407407),
    ([0, 80, 80, 80, 80], [5, 5, 999, 999, 999], 24.83372132),
    ([0, 5, 1, 1, 1, 1000], [5, 2, 999, 2, 5, 2], 99.30829228),
    ([5, 80, 0], [999, 2, 2], 93.91824526),
    ([80, 0, 5], [0, 5, 0], 100),
    ([5, 0, 5], [999, 90, 2], 49.81668194),
    ([80], [5], 0),
    ([80, 0, 1000, 1, 5, 1], [5, 999, 90, 2, 2, 999], 95.19035166),
    ([80, 0, 5], [2, 2, 999], 93.91824526),
]
# (cyclictest's histograms summed over its threads, the samples counted
# by the threads (overflows beyond the buckets included), p99, p99.9)
HISTOGRAMS = [
    ({5: 1, 7: 71, 8: 30, 19: 9, 34: 33, 47: 46, 54: 11, 55: 12, 2: 2, 3: 45, 6: 38, 27: 3,
      28: 45, 44: 36, 10: 27, 13: 28, 18: 49, 25: 4, 40: 35, 41: 1, 50: 44}, 576,
     ">10000", ">10000"),
    ({4: 37, 5: 42, 11: 32, 22: 28, 41: 2, 43: 48, 47: 29, 51: 16, 3: 33, 15: 47, 30: 16,
      31: 15, 34: 45, 36: 50, 39: 38, 50: 7, 1: 17, 23: 42, 25: 33, 28: 39, 44: 14, 46: 5},
     638, "51", ">10000"),
    ({19: 33, 21: 2, 23: 27, 26: 13, 31: 34, 32: 13, 33: 18, 54: 34, 2: 10, 4: 7, 6: 19,
      8: 18, 24: 21, 37: 44, 44: 24, 46: 15}, 332, "54", "54"),
    ({1: 6, 8: 73, 18: 43, 21: 26, 35: 33, 40: 46, 51: 10, 56: 28, 23: 77, 30: 4, 38: 31,
      39: 1, 46: 49, 57: 10, 4: 15, 12: 13, 14: 40, 16: 14, 17: 31, 52: 25}, 581,
     ">10000", ">10000"),
    ({15: 8, 16: 32, 25: 25, 38: 23, 52: 103, 54: 43, 58: 19, 59: 46, 8: 34, 14: 24, 28: 31,
      29: 4, 32: 41, 33: 38, 53: 29, 4: 40, 18: 47, 26: 16, 39: 31, 41: 16, 43: 15, 49: 48},
     716, "59", ">10000"),
    ({16: 7, 30: 45, 38: 39, 46: 45, 51: 26, 54: 22, 56: 31, 59: 13}, 231, ">10000", ">10000"),
]


class AsBenchShTest(unittest.TestCase):
    def test_median(self) -> None:
        for values, want in MEDIANS:
            with self.subTest(values=values):
                self.assertAlmostEqual(stats.median(values), want)

    def test_mann_whitney(self) -> None:
        for a, b, want_u, want_p in MANN_WHITNEY:
            with self.subTest(a=a, b=b):
                u, p = stats.mann_whitney(a, b)
                self.assertEqual(u, want_u)
                self.assertAlmostEqual(p, want_p, places=9)

    def test_tvd(self) -> None:
        for a, b, want in TVD:
            with self.subTest(a=a, b=b):
                self.assertAlmostEqual(stats.tvd(a, b), want, places=7)

    def test_histogram_percentile(self) -> None:
        """A percentile beyond the last bucket is an overflow (None)."""
        for hist, total, p99, p999 in HISTOGRAMS:
            for p, want in ((99, p99), (99.9, p999)):
                with self.subTest(p=p, total=total):
                    got = stats.histogram_percentile(hist, p, total)
                    self.assertEqual(">10000" if got is None else str(got), want)


class FixedValuesTest(unittest.TestCase):
    def test_exact_p(self) -> None:
        self.assertEqual(stats.mann_whitney([1, 2, 3], [4, 5, 6]), (0.0, 0.1))
        u, p = stats.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
        self.assertEqual(u, 25)
        self.assertAlmostEqual(p, 2 / 252)
        self.assertTrue(stats.disjoint(u, 5, 5))

    def test_median_overflow(self) -> None:
        self.assertEqual(stats.median_text(["3", ">10000", "5"]), "5")
        self.assertEqual(stats.median_text(["3", ">10000", "5", ">10000"]), ">10000")
        self.assertEqual(stats.median_text(["4", "1", "2", "3"]), "2.5")
        self.assertEqual(stats.sorted_values(["10", "9", ">10000", "1.5"]),
                         ["1.5", "9", "10", ">10000"])

    def test_number_text(self) -> None:
        """Whole numbers in full (awk prints 1234568, not 1.23457e+06)."""
        self.assertEqual(stats.number_text(1234568.0), "1234568")
        self.assertEqual(stats.number_text(3745.45), "3745.45")
        self.assertEqual(stats.number_text(1234567.5), "1.23457e+06")
        self.assertEqual(stats.median_text(["1234567", "1234569"]), "1234568")

    def test_tvd_bounds(self) -> None:
        self.assertEqual(stats.tvd([1, 0], [0, 1]), 100)
        self.assertEqual(stats.tvd([2, 2], [1, 1]), 0)

    def test_relative_change(self) -> None:
        self.assertAlmostEqual(stats.relative_change(642, 722), -11.0803, places=3)
        self.assertEqual(stats.relative_change(1, 0), 0)


if __name__ == "__main__":
    unittest.main()

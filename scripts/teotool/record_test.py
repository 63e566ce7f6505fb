# SPDX-License-Identifier: GPL-2.0
"""Recordings: the cut of trace-cmd's report to the run, and the recorder
driving a stand-in trace-cmd (TEO_TRACE_CMD) on a made-up tracefs."""

import os
import unittest
from pathlib import Path
from unittest import mock

from teotool import record
from teotool.testing import ScratchTest
from teotool.ui import Fatal

REPORT = """version = 6
cpus=2
  <idle>-0 [000] 0.5: cpu_idle: state=1 cpu_id=0
  bash-9 [001] 1.0: tracing_mark_write: teo-bench: start fio teo 1
  <idle>-0 [000] 1.1: cpu_idle: state=1 cpu_id=0
  <idle>-0 [000] 1.2: cpu_idle: state=4294967295 cpu_id=0
  bash-9 [001] 2.0: tracing_mark_write: teo-bench: stop fio teo 1
  <idle>-0 [000] 2.1: cpu_idle: state=1 cpu_id=0
"""

# A stand-in for trace-cmd: "record" switches the cpu_idle event on and
# writes its output file when interrupted; "report" prints REPORT.
FAKE = """#!/bin/sh
tracefs=$FAKE_TRACEFS
case $1 in
record)
	shift
	while [ $# -gt 0 ]; do
		case $1 in -o) out=$2; shift ;; -e) echo "$2" >> "$tracefs/events.log"; shift ;; esac
		shift
	done
	[ -z "$FAKE_RECORD_FAILS" ] || { echo "trace-cmd: no such event" >&2; exit 1; }
	trap 'echo data > "$out"; echo 0 > "$tracefs/events/power/cpu_idle/enable"; exit 0' INT
	echo 1 > "$tracefs/events/power/cpu_idle/enable"
	while :; do sleep 0.05; done
	;;
report) cat "$FAKE_REPORT" ;;
reset) echo reset >> "$tracefs/events.log" ;;
esac
"""


class CutTest(unittest.TestCase):
    def test_cut(self) -> None:
        text, marked = record.cut(REPORT)
        self.assertTrue(marked)
        self.assertEqual(text.splitlines(), [
            "version = 6", "cpus=2", REPORT.splitlines()[3], REPORT.splitlines()[4],
            REPORT.splitlines()[5], REPORT.splitlines()[6]])

    def test_unmarked(self) -> None:
        text, marked = record.cut("cpus=1\n x cpu_idle: state=1\n")
        self.assertFalse(marked)
        self.assertEqual(text, "cpus=1\n x cpu_idle: state=1\n")


class RecorderTest(ScratchTest):
    def setUp(self) -> None:
        super().setUp()
        self.tracefs = self.tmp / "tracefs"
        for ev in ("power/cpu_idle", "power/cpu_idle_miss", "irq/irq_handler_entry",
                   "sched/sched_switch"):
            (self.tracefs / "events" / ev).mkdir(parents=True)
        (self.tracefs / "events/power/cpu_idle/enable").write_text("0\n")
        (self.tracefs / "trace_marker").write_text("")
        fake = self.tmp / "trace-cmd"
        fake.write_text(FAKE)
        fake.chmod(0o755)
        (self.tmp / "report.txt").write_text(REPORT)
        self.env_patch = mock.patch.dict(os.environ, {
            "TEO_TRACE_CMD": str(fake), "FAKE_TRACEFS": str(self.tracefs),
            "FAKE_REPORT": str(self.tmp / "report.txt"), "TMPDIR": str(self.tmp)})
        self.env_patch.start()
        self.out = self.tmp / "out"

    def tearDown(self) -> None:
        self.env_patch.stop()
        super().tearDown()

    def test_events_of_this_kernel(self) -> None:
        self.assertEqual(record.available_events(self.tracefs),
                         ["power:cpu_idle", "power:cpu_idle_miss", "irq:irq_handler_entry",
                          "sched:sched_switch"])

    def test_run(self) -> None:
        rec = record.Recorder(self.out, self.tracefs)
        try:
            rec.start("fio-teo-1")
            rec.mark("start fio teo 1")
            self.assertEqual((self.tracefs / "trace_marker").read_text(),
                             "teo-bench: start fio teo 1\n")
            rec.stop()
        finally:
            rec.close()
        kept = (self.out / "record" / "fio-teo-1.txt").read_text()
        self.assertEqual(kept, record.cut(REPORT)[0])
        log = (self.tracefs / "events.log").read_text().split()
        self.assertEqual(log, ["power:cpu_idle", "power:cpu_idle_miss",
                               "irq:irq_handler_entry", "sched:sched_switch", "reset"])
        self.assertFalse(rec.tmp.exists(), "the local folder of the binary recording stays")
        self.assertIn("-e power:cpu_idle", rec.describe())

    def test_start_fails(self) -> None:
        with mock.patch.dict(os.environ, {"FAKE_RECORD_FAILS": "1"}):
            rec = record.Recorder(self.out, self.tracefs)
            try:
                with self.assertRaisesRegex(Fatal, "trace-cmd record did not start:"
                                            " trace-cmd: no such event"):
                    rec.start("fio-teo-1")
            finally:
                rec.close()

    def test_no_idle_event(self) -> None:
        (self.tracefs / "events/power/cpu_idle/enable").unlink()
        os.rmdir(self.tracefs / "events/power/cpu_idle")
        with self.assertRaisesRegex(Fatal, "this kernel has no power:cpu_idle event"):
            record.Recorder(self.out, self.tracefs)

    def test_no_tracefs(self) -> None:
        with self.assertRaisesRegex(Fatal, "no tracefs"):
            record.find_tracefs([self.tmp / "none"])
        self.assertEqual(record.find_tracefs([self.tmp / "none", self.tracefs]), self.tracefs)

    def test_check(self) -> None:
        with mock.patch.dict(os.environ, {"TEO_TRACE_CMD": str(self.tmp / "nothing")}):
            with self.assertRaisesRegex(Fatal, "is not an executable command"):
                record.check()
        record.check()

    def test_recording_without_idle_events(self) -> None:
        (self.tmp / "report.txt").write_text("cpus=1\nteo-bench: start\nteo-bench: stop\n")
        rec = record.Recorder(self.out, self.tracefs)
        try:
            rec.start("x-teo-1")
            with self.assertRaisesRegex(Fatal, "holds no cpu_idle event"):
                rec.stop()
        finally:
            rec.close()
        self.assertTrue(Path(self.out / "record" / "x-teo-1.txt").is_file())


if __name__ == "__main__":
    unittest.main()

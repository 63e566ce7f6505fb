#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Validate kernel reStructuredText files with docutils.

usage: check-rst.py KERNEL_TREE FILE.rst...

Parses each file (a path relative to KERNEL_TREE) as the kernel's Sphinx
build would, without needing Sphinx: ``kernel-doc`` directives are expanded
by running the tree's scripts/kernel-doc, and the Sphinx roles the kernel
uses are accepted as plain text.  Any docutils warning or error, and any
kernel-doc complaint, fails the check.
"""

import subprocess
import sys

try:
    from docutils import nodes
    from docutils.core import publish_doctree
    from docutils.parsers.rst import Directive, directives, roles
    from docutils.statemachine import ViewList
    from docutils.utils import SystemMessage
except ImportError:
    sys.exit("check-rst.py: python3-docutils is missing; run scripts/deps.sh")

TREE = "."


def kernel_doc_rst(source, options):
    """Run scripts/kernel-doc on source and return its reST output."""
    # Up to 6.15 scripts/kernel-doc is Perl, later Python; both take these.
    cmd = ["scripts/kernel-doc", "-rst", "-Wall"]
    if "doc" in options:
        cmd += ["-function", options["doc"]]
    for name in options.get("functions", "").split():
        cmd += ["-function", name]
    cmd.append(source)
    run = subprocess.run(cmd, cwd=TREE, capture_output=True, text=True)
    # The Perl version asks Sphinx for its version, which only the Sphinx
    # extension knows; its complaint about that says nothing of the file.
    stderr = "\n".join(line for line in run.stderr.splitlines()
                       if "Sphinx version not found" not in line)
    if run.returncode != 0 or stderr.strip():
        raise RuntimeError("kernel-doc on %s: %s" % (source, stderr.strip()))
    if not run.stdout.strip():
        raise RuntimeError("kernel-doc found nothing for %s in %s" %
                           (options, source))
    return run.stdout


class KernelDoc(Directive):
    """The kernel's kernel-doc directive, expanded in place."""

    required_arguments = 1
    option_spec = {
        "doc": directives.unchanged_required,
        "functions": directives.unchanged,
        "export": directives.unchanged,
        "internal": directives.unchanged,
        "identifiers": directives.unchanged,
    }

    def run(self):
        try:
            text = kernel_doc_rst(self.arguments[0], self.options)
        except RuntimeError as err:
            raise self.error(str(err))
        lines = ViewList()
        for number, line in enumerate(text.splitlines()):
            lines.append(line, self.arguments[0], number)
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(lines, 0, node, match_titles=True)
        return node.children


def plain_role(name, rawtext, text, lineno, inliner, options=None,
               content=None):
    """Accept a Sphinx role (:doc:, :c:func:, ...) as literal text."""
    return [nodes.literal(rawtext, text)], []


def main(argv):
    """Check the files named on the command line; return the exit code."""
    global TREE
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 2
    TREE = argv[1]
    directives.register_directive("kernel-doc", KernelDoc)
    for role in ("doc", "ref", "c:func", "c:type", "c:macro", "file"):
        roles.register_local_role(role, plain_role)
    failed = False
    for path in argv[2:]:
        with open("%s/%s" % (TREE, path), encoding="utf-8") as rst:
            text = rst.read()
        try:
            publish_doctree(text, source_path=path, settings_overrides={
                "report_level": 2, "halt_level": 2, "warning_stream": sys.stderr,
            })
        except SystemMessage:
            # docutils has already written the message to stderr.
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

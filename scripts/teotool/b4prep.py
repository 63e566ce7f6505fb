# SPDX-License-Identifier: GPL-2.0
"""The mails of a series, made by b4: it owns the cover letter commit, the
revision, the To/Cc addresses (its get_maintainer.pl integration) and the
mails themselves (b4 send --output-dir), so that the branch it leaves is
the one a developer sends from and compares revisions on (b4 prep
--compare-to, once a revision has been sent from it).
"""

import shutil
import stat
import tempfile
from pathlib import Path
from typing import List

from teotool import deps, process, seriesrepo
from teotool.ui import Fatal

BRANCH = "b4/teo"
# A cover letter without the base-commit line, for a base that is no
# upstream commit (b4's template otherwise names it).
NO_BASE_TEMPLATE = """${cover}

---
${shortlog}

${diffstat}
---
change-id: ${change_id}

Best regards,
--\x20
${signature}
"""


def _b4(tree: Path, *args: str, env: "dict[str, str] | None" = None) -> str:
    done = process.output(["b4", *args], cwd=tree, env=process.debian_env(env))
    if done.returncode != 0:
        lines = (done.stderr + done.stdout).strip().splitlines() or ["(no message)"]
        raise Fatal(f"b4 {' '.join(args)} failed: {lines[-1]}")
    return done.stdout + done.stderr


def prepare_branch(repo: Path, tree: Path, who: seriesrepo.Identity,
                   upstream_base: bool) -> None:
    """Check out teo-series as BRANCH in tree and enroll it with b4."""
    deps.need_cmd("b4")
    seriesrepo.work_tree(repo, tree, seriesrepo.SERIES_REF, BRANCH)
    seriesrepo.git(tree, "config", "user.name", who.name)
    seriesrepo.git(tree, "config", "user.email", who.email)
    if upstream_base:
        process.output(["git", "-C", str(tree), "config", "--unset-all",
                        "b4.prep-cover-template"])
    else:
        template = Path(seriesrepo.git(tree, "rev-parse", "--absolute-git-dir")
                        .strip()) / "b4-cover-template"
        template.write_text(NO_BASE_TEMPLATE, encoding="utf-8")
        seriesrepo.git(tree, "config", "b4.prep-cover-template", str(template))
    # In a kernel tree b4 sends through kernel.org's web endpoint, which
    # wants every mail signed, unless git has an SMTP server: name git
    # send-email's own default where the user configured none, so that
    # b4 writes the mails unsigned (signing is the sender's choice).
    if process.output(["git", "-C", str(tree), "config", "sendemail.smtpserver"]
                      ).returncode != 0:
        seriesrepo.git(tree, "config", "sendemail.smtpserver", "localhost")
    _b4(tree, "prep", "--enroll", seriesrepo.BASE_REF)


def set_cover(tree: Path, subject: str, text: str, cc: List[str]) -> None:
    """Give b4 the cover letter: its --edit-cover runs $EDITOR on the cover
    commit's message, and our editor writes the letter in."""
    with tempfile.TemporaryDirectory(prefix="b4-cover.") as tmp:
        letter = Path(tmp) / "letter"
        trailers = "".join(f"Cc: {a}\n" for a in cc)
        letter.write_text(f"{subject}\n\n{text.rstrip()}\n\n{trailers}",
                          encoding="utf-8")
        editor = Path(tmp) / "editor"
        editor.write_text(f'#!/bin/sh\nexec cp "{letter}" "$1"\n', encoding="utf-8")
        editor.chmod(stat.S_IRWXU)
        _b4(tree, "prep", "--edit-cover", env={"EDITOR": str(editor),
                                                "VISUAL": str(editor)})


def set_revision(tree: Path, revision: int) -> None:
    _b4(tree, "prep", "--force-revision", str(revision))


def add_recipients(tree: Path) -> None:
    """b4's To/Cc from the tree's scripts/get_maintainer.pl."""
    _b4(tree, "prep", "--auto-to-cc")


def write_mails(tree: Path, out: Path) -> List[Path]:
    """The mails b4 would send, written to out instead (no signature:
    attestation is the sender's business)."""
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        _b4(tree, "send", "--output-dir", str(tmp), "--no-sign")
        mails = sorted(tmp.glob("*.eml"))
        if not mails:
            raise Fatal("b4 send --output-dir wrote no mails")
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return sorted(out.glob("*.eml"))


def cover_message(tree: Path) -> str:
    """The cover letter commit's message (with b4's tracking data)."""
    first = seriesrepo.git(tree, "rev-list", "--reverse",
                           f"{seriesrepo.BASE_REF}..{BRANCH}").split()[0]
    return seriesrepo.git(tree, "show", "-s", "--format=%B", first)

# SPDX-License-Identifier: GPL-2.0
"""The git repository a series is exported from: the base tree as commit
teo-base, and a queue imported onto it as branch teo-series.

A clean git checkout of the base is cloned (shared objects), so teo-base
is a real upstream commit and the export can name it; any other tree (a
Debian source package) is recorded as one commit, never named upstream.
The queue is imported with git's own pieces: git mailinfo reads each
patch's message as git am and git quiltimport do, git apply --cached
applies it to a scratch index, and git commit-tree records it, so no
work tree needs to be checked out (the base has some 80000 files).
"""

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from teotool import paths, process, queue
from teotool.ui import Fatal, note

BASE_REF = "teo-base"
SERIES_REF = "teo-series"


@dataclass(frozen=True)
class Identity:
    """Who signs the patches off (git config user.name and user.email)."""
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


def git(repo: Path, *args: str, env: Optional[Mapping[str, str]] = None,
        stdin: Optional[str] = None) -> str:
    """Run git in repo and return its output; a failure is one line."""
    full = process.debian_env(env)
    run = process.output(["git", "-C", str(repo), *args], env=full, stdin=stdin)
    if run.returncode != 0:
        err = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise Fatal(f"git {args[0]} failed in {repo}: {err}")
    return run.stdout


def is_clean_checkout(base: Path) -> bool:
    if not (base / ".git").exists():
        return False
    run = process.output(["git", "-C", str(base), "status", "--porcelain"])
    return run.returncode == 0 and run.stdout == ""


def base_repo(base: Path, repo: Path) -> Path:
    """The repository of base, made once (a few minutes: under the lock,
    so that no benchmark shares the machine with it)."""
    if _recorded(repo):
        return repo
    with process.BuildLock():
        # Another run may have made it while this one waited.
        if _recorded(repo):
            return repo
        shutil.rmtree(repo, ignore_errors=True)
        repo.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=repo.name + ".new.", dir=repo.parent))
        try:
            _record_base(base, tmp / "repo.git")
            (tmp / "repo.git").rename(repo)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return repo


def _recorded(repo: Path) -> bool:
    return (repo / "HEAD").is_file() and process.output(
        ["git", "--git-dir", str(repo), "rev-parse", "-q", "--verify",
         BASE_REF]).returncode == 0


def _record_base(base: Path, repo: Path) -> None:
    if is_clean_checkout(base):
        note(f"cloning {base} (shared objects; it is not touched)")
        if process.run(["git", "clone", "-q", "--bare", "--shared", base, repo]) != 0:
            raise Fatal(f"git clone of {base} failed")
        git(repo, "update-ref", f"refs/heads/{BASE_REF}", "HEAD")
        return
    note(f"recording {base} as one git commit (once; a few minutes)")
    git(Path("."), "init", "-q", "--bare", str(repo))
    # A scratch repository: an automatic gc of its loose objects only
    # costs time.
    git(repo, "config", "gc.auto", "0")
    env = {"GIT_WORK_TREE": str(base), "GIT_INDEX_FILE": str(repo / "index")}
    # -f: Debian's tree ignores everything at its top level.
    git(repo, "add", "-A", "-f", "--", ".", ":!.teo-unpacked", env=env)
    tree = git(repo, "write-tree", env=env).strip()
    version = base.name
    commit = git(repo, "commit-tree", tree, "-m", f"Linux ({version}, {base})",
                 env={"GIT_AUTHOR_NAME": "base", "GIT_AUTHOR_EMAIL": "base@invalid",
                      "GIT_COMMITTER_NAME": "base",
                      "GIT_COMMITTER_EMAIL": "base@invalid"}).strip()
    git(repo, "update-ref", f"refs/heads/{BASE_REF}", commit)


def message_of(patch_text: str, repo: Path) -> str:
    """The commit message of a queue patch, as git mailinfo reads it."""
    with tempfile.TemporaryDirectory(prefix="mailinfo.") as tmp:
        msg, body = Path(tmp) / "msg", Path(tmp) / "patch"
        info = git(repo, "mailinfo", "-k", str(msg), str(body), stdin=patch_text)
        subject = ""
        for line in info.splitlines():
            if line.startswith("Subject: "):
                subject = line[len("Subject: "):]
        text = msg.read_text(encoding="utf-8").strip("\n")
    return f"{subject}\n\n{text}\n" if text else f"{subject}\n"


def sign_off(message: str, who: Identity, repo: Path) -> str:
    return git(repo, "interpret-trailers", "--trailer",
               f"Signed-off-by: {who}", stdin=message)


def import_queue(repo: Path, q: queue.Queue, who: Identity,
                 ref: str = SERIES_REF, where: str = "the base") -> List[str]:
    """Commit every patch of the queue on BASE_REF; branch ref; the
    commits in order.  where names the base in the error when a patch
    does not apply."""
    env: Dict[str, str] = {
        "GIT_AUTHOR_NAME": who.name, "GIT_AUTHOR_EMAIL": who.email,
        "GIT_COMMITTER_NAME": who.name, "GIT_COMMITTER_EMAIL": who.email,
    }
    commits = []
    parent = git(repo, "rev-parse", BASE_REF).strip()
    with tempfile.TemporaryDirectory(prefix="import.") as tmp:
        index = {**env, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(repo, "read-tree", parent, env=index)
        for p in q.patches:
            diff = Path(tmp) / "diff"
            diff.write_text(p.diff(), encoding="utf-8")
            run = process.output(
                ["git", "-C", str(repo), "apply", "--cached", str(diff)],
                env=process.debian_env(index))
            if run.returncode != 0:
                why = (run.stderr.strip().splitlines() or [""])[0]
                raise Fatal(f"{q.name}/{p.name} does not apply to {where}"
                            f" ({why})")
            tree = git(repo, "write-tree", env=index).strip()
            message = sign_off(message_of(p.text(), repo), who, repo)
            parent = git(repo, "commit-tree", tree, "-p", parent,
                         env=env, stdin=message).strip()
            commits.append(parent)
    git(repo, "update-ref", f"refs/heads/{ref}", parent)
    return commits


def overlay_tree(repo: Path, rev: str) -> str:
    """The tree of revision rev with the overlay paths as this repository
    holds them: equal to rev's own tree exactly when the commits up to
    rev lay in the overlay byte for byte."""
    with tempfile.TemporaryDirectory(prefix="overlay.") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(repo, "read-tree", rev, env=env)
        # Mode 0 removes an entry (git update-index --index-info).
        old = git(repo, "ls-tree", "-r", "--name-only", rev, "--",
                  *paths.OVERLAY_PATHS).splitlines()
        zero = "0" * 40
        if old:
            git(repo, "update-index", "--index-info", env=env,
                stdin="".join(f"0 {zero}\t{p}\n" for p in old))
        files = []
        for rel in paths.OVERLAY_PATHS:
            top = paths.REPO / rel
            found = sorted(top.rglob("*")) if top.is_dir() else [top]
            files += [f for f in found if f.is_file() and not f.is_symlink()]
        if files:
            blobs = git(repo, "hash-object", "-w", "--stdin-paths",
                        stdin="".join(f"{f}\n" for f in files)).split()
            entries = "".join(
                f"{'100755' if os.access(f, os.X_OK) else '100644'} {b}\t"
                f"{f.relative_to(paths.REPO)}\n" for f, b in zip(files, blobs))
            git(repo, "update-index", "--add", "--index-info", env=env,
                stdin=entries)
        return git(repo, "write-tree", env=env).strip()


def changed(repo: Path, before: str, after: str, files: List[str]) -> bool:
    """Whether any of files differs between two revisions."""
    run = process.output(["git", "-C", str(repo), "diff", "--quiet", before,
                          after, "--", *files])
    return run.returncode == 1


def show_file(repo: Path, rev: str, path: str) -> Optional[str]:
    run = process.output(["git", "-C", str(repo), "show", f"{rev}:{path}"])
    return run.stdout if run.returncode == 0 else None


def extract_governor(repo: Path, rev: str, folder: Path) -> Path:
    """Copy the governor of revision rev (teo.c and the headers beside it)
    into folder, so that the lab compiles it as that tree would; the
    path of its teo.c."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("teo.c", "teo.h", "teo_trace.h", "gov.h"):
        text = show_file(repo, rev, f"{paths.GOVERNORS}/{name}")
        if text is not None:
            (folder / name).write_text(text, encoding="utf-8")
    return folder / "teo.c"


def work_tree(repo: Path, folder: Path, rev: str, branch: str) -> Path:
    """A checkout of rev at a fixed folder (builds in it stay incremental
    from one check to the next), on branch."""
    process.output(["git", "-C", str(repo), "worktree", "remove", "--force",
                    str(folder)])
    shutil.rmtree(folder, ignore_errors=True)
    git(repo, "worktree", "prune")
    git(repo, "worktree", "add", "-q", "-f", "-B", branch, str(folder), rev)
    return folder


def touches(repo: Path, rev: str, prefix: str) -> bool:
    """Whether commit rev changes anything under prefix."""
    out = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", rev,
              "--", prefix)
    return bool(out.strip())


def commits_since(repo: Path, base: str, tip: str) -> List[str]:
    return git(repo, "rev-list", "--reverse", f"{base}..{tip}").split()


def user_identity() -> Identity:
    """The identity that signs the patches off: the user's git config."""
    def get(key: str) -> str:
        run = process.output(["git", "-C", str(paths.REPO), "config", key])
        return run.stdout.strip() if run.returncode == 0 else ""
    name, email = get("user.name"), get("user.email")
    if not name or not email:
        raise Fatal("no git identity: set user.name and user.email with git"
                    " config (they sign the patches off)")
    return Identity(name, email)

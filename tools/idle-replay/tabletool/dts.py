# SPDX-License-Identifier: GPL-2.0
"""The device-tree reader: dtc's source syntax after cpp, merged into one
tree as dtc merges it (nodes reopened by label or path, /delete-node/,
/delete-property/, dtc's own /include/), with every position traced back
to its file and line through cpp's line markers.

It reads both what cpp makes of a board and what dtc writes back as
source (dtc -O dts: one flat tree, expressions evaluated, references
turned into phandle numbers), which is how --check-dtc holds it against
dtc.  Properties stay text until the idle-state logic reads them."""

import bisect
import os
import re
from typing import Dict, Iterator, List, Match, Optional, Tuple, Union

from tabletool.csource import blank, eval_c_int, read_text
from tabletool.errors import DtsError
from tabletool.preprocess import INCLUDE_PREFIXES, DtFiles

# A cell: a number, or a reference ('ref', label) or ('path', path).
Cell = Union[int, Tuple[str, str]]
# A line marker of cpp: (offset of the line it names, line, file).
Marker = Tuple[int, int, str]

PRE_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|//[^\n]*|^#[ \t]*\d+[ \t]+"[^\n]*$',
                    re.S | re.M)
MARKER_RE = re.compile(r'#[ \t]*(\d+)[ \t]+"((?:[^"\\]|\\.)*)"')
TOK_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|&\{[^}]*\}|[{}]')
STMT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|;')
LABELS_RE = re.compile(r"\s*((?:[A-Za-z_]\w*\s*:\s*)*)(.*)\Z", re.S)
NODE_NAME_RE = re.compile(r"[A-Za-z0-9,._+@-]+\Z")
DTS_INCLUDE_RE = re.compile(r'/include/\s*"([^"]+)"')
STRING_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
REF_RE = re.compile(r"&(\{[^}]*\}|[A-Za-z_]\w*)")
BITS_RE = re.compile(r"/bits/\s*(\d+)")
VALUE_LABEL_RE = re.compile(r"[A-Za-z_]\w*:")
CELL_REF_RE = re.compile(r"&([A-Za-z_]\w*)")
CELL_WORD_RE = re.compile(r"'(?:\\.|[^'])'|[0-9A-Za-z_]+")


def split_labels(text: str) -> Tuple[List[str], str]:
    """'a: b: rest' -> (['a', 'b'], 'rest')."""
    m = LABELS_RE.match(text)
    assert m is not None  # every text matches
    labels = re.findall(r"[A-Za-z_]\w*", m.group(1))
    return labels, m.group(2).strip()


class Node:
    """A node of the merged tree; its properties stay text until read."""
    __slots__ = ("name", "parent", "children", "segs", "dead", "props")

    def __init__(self, name: str, parent: Optional["Node"]) -> None:
        self.name = name
        self.parent = parent
        self.children: Dict[str, Node] = {}
        self.segs: List[Tuple[int, int]] = []  # its statements' spans, in merge order
        self.dead = False                      # deleted (/delete-node/)
        # {name: (value text, offset)} once parsed
        self.props: Optional[Dict[str, Tuple[str, int]]] = None


class Tree:
    """The merged tree of one preprocessed board, as dtc would build it.

    Properties are kept as text spans and parsed only for the nodes the
    idle-state logic reads."""

    def __init__(self, src: str, files: DtFiles, board: str, text: str) -> None:
        self.src = src
        self.files = files
        self.board = board
        self.text, self.markers = self._splice(text)
        self._mpos = [m[0] for m in self.markers]
        self.root = Node("", None)
        self.labels: Dict[str, List[Node]] = {}
        self._phandles: Optional[Dict[int, Node]] = None
        self._parse()

    # -- text and positions
    @staticmethod
    def _clean(text: str) -> Tuple[str, List[Marker]]:
        """Comments and line markers blanked, the markers noted."""
        markers = []

        def repl(m: Match[str]) -> str:
            s = m.group()
            if s[0] == '"':
                return s
            if s[0] == "#":
                mm = MARKER_RE.match(s)
                assert mm is not None  # PRE_RE matched a marker
                markers.append((m.end() + 1, int(mm.group(1)), mm.group(2)))
            return blank(s)
        return PRE_RE.sub(repl, text), markers

    def _splice(self, text: str) -> Tuple[str, List[Marker]]:
        """Apply dtc's own /include/ (not handled by cpp)."""
        for _ in range(16):
            clean, markers = self._clean(text)
            m = DTS_INCLUDE_RE.search(clean)
            if not m:
                return clean, markers
            cur, line = self._where_in(markers, clean, m.start())
            rel = None
            for d in (os.path.dirname(cur), os.path.dirname(self.board), INCLUDE_PREFIXES):
                p = self.files.canon(os.path.join(d, m.group(1)))
                if self.files.isfile(p):
                    rel = p
                    break
            if rel is None:
                raise DtsError(f"{cur}:{line}: /include/ \"{m.group(1)}\" not found")
            inc = read_text(os.path.join(self.src, rel))
            text = (text[:m.start()] + f'\n# 1 "{rel}"\n' + inc + f'\n# {line} "{cur}"\n'
                    + text[m.end():])
        raise DtsError("/include/ nested too deep")

    @staticmethod
    def _where_in(markers: List[Marker], text: str, pos: int) -> Tuple[str, int]:
        i = bisect.bisect_right([m[0] for m in markers], pos) - 1
        if i < 0:
            return "<cpp>", text.count("\n", 0, pos) + 1
        start, line, name = markers[i]
        return name, line + text.count("\n", start, pos)

    def where(self, pos: int) -> str:
        """'file:line' of an offset of the text."""
        i = bisect.bisect_right(self._mpos, pos) - 1
        if i < 0:
            return f"{self.board}:?"
        start, line, name = self.markers[i]
        if name.startswith(INCLUDE_PREFIXES + "/"):
            name = self.files.canon(name)
        elif name == "<stdin>":
            name = self.board
        line += self.text.count("\n", start, pos)
        return f"{name}:{line}"

    def _stmts(self, a: int, b: int) -> Iterator[Tuple[str, int]]:
        """Statements of text[a:b]: (text, offset of its first character)."""
        last = a
        for m in STMT_RE.finditer(self.text, a, b):
            if m.group() == ";":
                raw = self.text[last:m.start()]
                s = raw.lstrip()
                if s:
                    yield s.rstrip(), last + len(raw) - len(s)
                last = m.end()
        rest = self.text[last:b].strip()
        if rest:
            raise DtsError(f"{self.where(last)}: expected ';' after '{rest[:40]}'")

    # -- structure
    def _parse(self) -> None:
        text = self.text
        stack: List[Optional[Node]] = [None]
        pending = 0
        for m in TOK_RE.finditer(text):
            c = m.group()[0]
            if c == "{":
                start = m.start()
                semi = text.rfind(";", pending, start)
                head_at = pending
                if semi >= 0:
                    self._segment(stack[-1], pending, semi + 1)
                    head_at = semi + 1
                stack.append(self._open(stack[-1], text[head_at:start], head_at))
                pending = m.end()
            elif c == "}":
                if len(stack) == 1:
                    raise DtsError(f"{self.where(m.start())}: unbalanced '}}'")
                self._segment(stack[-1], pending, m.start())
                stack.pop()
                pending = m.end()
        if len(stack) != 1:
            raise DtsError(f"{self.board}: unterminated node")
        self._segment(None, pending, len(text))

    def _segment(self, node: Optional[Node], a: int, b: int) -> None:
        """Statements text[a:b] of node (None: the top level)."""
        text = self.text
        if node is None:
            for s, at in self._stmts(a, b):
                if s.startswith("/delete-node/"):
                    target = self._ref(s[len("/delete-node/"):].strip(), at)
                    self._delete(target)
                elif s.split()[0] in ("/dts-v1/", "/plugin/", "/memreserve/", "/omit-if-no-ref/"):
                    continue
                else:
                    raise DtsError(f"{self.where(at)}: unexpected '{s[:40]}' at top level")
            return
        if text.find("/delete-node/", a, b) >= 0:
            for s, at in self._stmts(a, b):
                if s.startswith("/delete-node/"):
                    child = node.children.get(s[len("/delete-node/"):].strip())
                    if child is not None:
                        self._delete(child)
        if b - a > 1:
            node.segs.append((a, b))

    @staticmethod
    def _delete(node: Node) -> None:
        if node.parent is not None and node.parent.children.get(node.name) is node:
            del node.parent.children[node.name]
        node.dead = True

    @staticmethod
    def _alive(node: Optional[Node]) -> bool:
        while node is not None:
            if node.dead:
                return False
            node = node.parent
        return True

    def _ref(self, ref: str, at: int) -> Node:
        """The node a top-level '&label' or '&{/path}' names."""
        if ref.startswith("&{") and ref.endswith("}"):
            node = self._path(ref[2:-1])
        elif ref.startswith("&"):
            node = self._label(ref[1:])
        else:
            node = None
        if node is None:
            raise DtsError(f"{self.where(at)}: label or path {ref} not found")
        return node

    def _path(self, path: str) -> Optional[Node]:
        """A node by path; dtc also takes 'label/sub/path'."""
        node: Optional[Node] = self.root
        if not path.startswith("/"):
            label, _, path = path.partition("/")
            node = self._label(label)
            if node is None:
                return None
        for part in [p for p in path.split("/") if p]:
            assert node is not None
            node = node.children.get(part)
            if node is None:
                return None
        return node

    def _open(self, parent: Optional[Node], head: str, at: int) -> Node:
        """The node a '{' opens: head is the text before it."""
        at += len(head) - len(head.lstrip())
        head = head.strip()
        if head.startswith("/omit-if-no-ref/"):
            head = head[len("/omit-if-no-ref/"):]
        labels, rest = split_labels(head)
        if parent is None:
            node = self.root if rest == "/" else self._ref(rest, at)
        else:
            if not NODE_NAME_RE.match(rest):
                raise DtsError(f"{self.where(at)}: cannot parse node header '{head[:40]}'")
            child = parent.children.get(rest)
            if child is None:
                child = Node(rest, parent)
                parent.children[rest] = child
            node = child
        for lab in labels:
            nodes = self.labels.setdefault(lab, [])
            if node not in nodes:
                nodes.append(node)
        return node

    def _label(self, name: str) -> Optional[Node]:
        """The node carrying a label: the first alive one in tree order (as
        dtc looks labels up; a label may repeat if all but one are deleted)."""
        alive = [n for n in self.labels.get(name, ()) if self._alive(n)]
        if len(alive) < 2:
            return alive[0] if alive else None
        order: Dict[int, int] = {}
        todo = [self.root]
        while todo:
            n = todo.pop()
            order[id(n)] = len(order)
            todo.extend(reversed(list(n.children.values())))
        return min(alive, key=lambda n: order.get(id(n), len(order)))

    # -- properties (the interface the idle-state logic uses)
    def props(self, node: Node) -> Dict[str, Tuple[str, int]]:
        if node.props is None:
            d: Dict[str, Tuple[str, int]] = {}
            for a, b in node.segs:
                for s, at in self._stmts(a, b):
                    if s.startswith("/delete-property/"):
                        d.pop(s[len("/delete-property/"):].strip(), None)
                    elif not s.startswith("/delete-node/"):
                        name, eq, value = s.partition("=")
                        name = split_labels(name)[1]
                        d[name] = (value.strip() if eq else "", at)
            node.props = d
        return node.props

    def has(self, node: Node, name: str) -> bool:
        return name in self.props(node)

    def _value(self, node: Node, name: str) -> Optional[Tuple[List[str], List[Cell]]]:
        p = self.props(node).get(name)
        return None if p is None else parse_value(p[0], self.where(p[1]))

    def strings(self, node: Node, name: str) -> Optional[List[str]]:
        """The strings of a property, None if the node has no such property."""
        v = self._value(node, name)
        return None if v is None else v[0]

    def cells(self, node: Node, name: str) -> Optional[List[Cell]]:
        """The cells of a property, None if the node has no such property."""
        v = self._value(node, name)
        return None if v is None else v[1]

    def deref(self, cell: Cell) -> Optional[Node]:
        """A phandle cell -> node (None if it does not resolve)."""
        if isinstance(cell, tuple):
            kind, ref = cell
            return self._path(ref) if kind == "path" else self._label(ref)
        if self._phandles is None:
            self._phandles = {}
            self._index_phandles(self.root, self._phandles)
        return self._phandles.get(cell)

    def _index_phandles(self, node: Node, index: Dict[int, Node]) -> None:
        for child in node.children.values():
            for key in ("phandle", "linux,phandle"):
                c = self.cells(child, key)
                if c and isinstance(c[0], int):
                    index[c[0]] = child
            self._index_phandles(child, index)

    def prop_where(self, node: Node, name: str) -> Optional[str]:
        """'file:line' of a property, None if the node has none."""
        p = self.props(node).get(name)
        return self.where(p[1]) if p else None

    def prop_pos(self, node: Node, name: str) -> Optional[int]:
        """The offset of a property in the text, None if the node has none."""
        p = self.props(node).get(name)
        return p[1] if p else None


def parse_value(text: str, where: str) -> Tuple[List[str], List[Cell]]:
    """A property value -> (its strings, its cells).  A reference outside
    '<>' counts as a string, as written (dtc puts the node's path there);
    a '/bits/' width masks the cells of the '<>' that follows; byte
    strings '[..]' are read and left out."""
    strings: List[str] = []
    cells: List[Cell] = []
    i, n = 0, len(text)
    bits = 32
    while i < n:
        c = text[i]
        if c.isspace() or c == ",":
            i += 1
        elif c == '"':
            m = STRING_RE.match(text, i)
            if not m:
                raise DtsError(f"{where}: bad string")
            strings.append(bytes(m.group(1), "utf-8").decode("unicode_escape"))
            i = m.end()
        elif c == "<":
            j, depth = i + 1, 0
            while j < n and (text[j] != ">" or depth):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            if j >= n:
                raise DtsError(f"{where}: unterminated '<'")
            cells.extend(parse_cells(text[i + 1:j], where, bits))
            bits = 32
            i = j + 1
        elif c == "[":
            j = text.find("]", i)
            if j < 0:
                raise DtsError(f"{where}: unterminated '['")
            try:
                bytes.fromhex("".join(text[i + 1:j].split()))
            except ValueError:
                raise DtsError(f"{where}: bad byte string") from None
            i = j + 1
        elif c == "&":
            m = REF_RE.match(text, i)
            if not m:
                raise DtsError(f"{where}: bad reference")
            strings.append(m.group(1))
            i = m.end()
        elif text.startswith("/bits/", i):
            m = BITS_RE.match(text, i)
            if not m:
                raise DtsError(f"{where}: /bits/ without a width")
            bits = int(m.group(1))
            i = m.end()
        else:
            m = VALUE_LABEL_RE.match(text, i)
            if not m:
                raise DtsError(f"{where}: cannot parse value near '{text[i:i + 30]}'")
            i = m.end()  # a label inside a value
    return strings, cells


def parse_cells(text: str, where: str, bits: int) -> List[Cell]:
    """The inside of '<...>'."""
    out: List[Cell] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "&":
            if text.startswith("&{", i):
                j = text.find("}", i)
                if j < 0:
                    raise DtsError(f"{where}: unterminated '&{{' in cells")
                out.append(("path", text[i + 2:j]))
                i = j + 1
            else:
                m = CELL_REF_RE.match(text, i)
                if not m:
                    raise DtsError(f"{where}: bad reference in cells")
                out.append(("ref", m.group(1)))
                i = m.end()
        elif c == "(":
            depth, j = 0, i
            while j < n:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            out.append(_cell_int(text[i:j + 1], where, bits))
            i = j + 1
        else:
            m = CELL_WORD_RE.match(text, i)
            if not m:
                raise DtsError(f"{where}: cannot parse cells near '{text[i:i + 30]}'")
            if re.fullmatch(r"[A-Za-z_]\w*:", text[i:m.end() + 1]):
                i = m.end() + 1  # label
                continue
            out.append(_cell_int(m.group(), where, bits))
            i = m.end()
    return out


def _cell_int(expr: str, where: str, bits: int) -> int:
    try:
        return eval_c_int(expr) & ((1 << bits) - 1)
    except ValueError as e:
        raise DtsError(f"{where}: cannot evaluate '{expr}' ({e})") from None

# SPDX-License-Identifier: GPL-2.0
"""Enough C for the static initializers of idle-state tables: comments
blanked (offsets and line numbers kept), #defines and enum constants,
brace matching, '.field = value' items, and integer constant
expressions."""

import ast
import bisect
import os
import re
from typing import (Callable, Dict, Iterator, List, Mapping, Match, Optional, Sequence,
                    Tuple, Type)

from tabletool.errors import ExtractError

# A field of an initializer: its value text and the offset of that text.
Field = Tuple[str, int]
# A run-time update 'array[i].field op value;': (index, field, op, value,
# line, function).
Update = Tuple[int, str, str, str, int, Optional[str]]

C_LEXEME = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*',
                      re.S)
STRING_OR_BRACE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}]')
STRING_OR_BRACKET = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[\[({})\],]')
C_INT = re.compile(r"\b(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\b")


def read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def blank(s: str) -> str:
    """Same length, same newlines, nothing else: keeps offsets and lines."""
    if "\n" not in s:
        return " " * len(s)
    return "\n".join(" " * len(part) for part in s.split("\n"))


def strip_c_comments(text: str) -> str:
    return C_LEXEME.sub(lambda m: m.group() if m.group()[0] in "\"'" else blank(m.group()),
                        text)


class CFile:
    """A C file with comments blanked, its #defines and enum constants.
    text, when given, stands for the file's contents (tests)."""

    def __init__(self, src: str, rel: str, text: Optional[str] = None) -> None:
        self.rel = rel
        self.path = os.path.join(src, rel)
        self.text = strip_c_comments(read_text(self.path) if text is None else text)
        self._lines = [m.start() for m in re.finditer("\n", self.text)]
        self.defines: Dict[str, str] = {}
        self.fmacros: Dict[str, Tuple[List[str], str]] = {}
        joined = re.sub(r"\\\n", "  ", self.text)
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)]*\))?[ \t]*(.*)$",
                             joined, re.M):
            if m.group(2) is None:
                self.defines[m.group(1)] = m.group(3).strip()
            else:
                params = [p.strip() for p in m.group(2)[1:-1].split(",") if p.strip()]
                self.fmacros[m.group(1)] = (params, m.group(3).strip())
        for m in re.finditer(r"\benum\b[^{;]*\{([^}]*)\}", self.text):
            self._enum(m.group(1))

    def _enum(self, body: str) -> None:
        value = -1
        for item in body.split(","):
            name, _, expr = item.partition("=")
            name = name.strip()
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                continue
            try:
                value = eval_c_int(expr, self.defines) if expr.strip() else value + 1
            except ValueError:
                return  # the rest is not needed unless a table uses it
            self.defines[name] = str(value)

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self._lines, pos) + 1

    def where(self, pos: int) -> str:
        return f"{self.rel}:{self.line(pos)}"

    def eval(self, expr: str, pos: Optional[int], what: str) -> int:
        try:
            return eval_c_int(expr, self.defines)
        except ValueError as e:
            at = f"{self.where(pos)}: " if pos is not None else f"{self.rel}: "
            raise ExtractError(f"{at}cannot evaluate {what} '{expr.strip()}' ({e})") from None

    def find_init(self, pattern: str) -> Iterator[Tuple[Match[str], int, int]]:
        """Yield (match, body_start, body_end) for 'pattern ... = {' initializers."""
        for m in re.finditer(pattern, self.text):
            open_pos = m.end() - 1
            yield m, open_pos + 1, match_brace(self.text, open_pos)

    def function_at(self, pos: int) -> Optional[str]:
        """Name of the function whose body holds pos (C files in kernel style)."""
        best = None
        for m in re.finditer(r"^[A-Za-z_][^\n;]*?\b(\w+)\s*\([^;{]*\)\s*\{", self.text, re.M):
            if m.start() > pos:
                break
            best = m.group(1)
        return best

    def body_of(self, func: str) -> Optional[str]:
        """The body of the function func defines, None if it defines none."""
        m = re.search(r"^[^\n;]*\b" + func + r"\s*\([^;{]*\)\s*\{", self.text, re.M)
        if not m:
            return None
        return self.text[m.end():match_brace(self.text, m.end() - 1)]


def require(cfile: CFile, pattern: str, fact: str) -> Match[str]:
    """The match of pattern, a fact of the tree the extractor's model
    relies on; stop if the tree does not state it."""
    m = re.search(pattern, cfile.text, re.S)
    if not m:
        raise ExtractError(f"{cfile.rel}: cannot confirm that {fact}; the extractor's model "
                           "of this tree needs review")
    return m


def match_brace(text: str, open_pos: int) -> int:
    """Index of the '}' matching the '{' at open_pos (strings skipped)."""
    depth = 0
    for m in STRING_OR_BRACE.finditer(text[open_pos:]):
        t = m.group()
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return open_pos + m.start()
    raise ExtractError(f"unbalanced braces after offset {open_pos}")


def split_top(text: str, start: int, end: int) -> List[Field]:
    """Split text[start:end] at commas outside brackets: [(piece, offset)]."""
    out = []
    depth = 0
    last = start
    for m in STRING_OR_BRACKET.finditer(text[start:end]):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == "," and depth == 0:
            out.append((text[last:start + m.start()], last))
            last = start + m.end()
    out.append((text[last:end], last))
    return [(p.strip(), o + len(p) - len(p.lstrip())) for p, o in out if p.strip()]


BINOPS: Dict[Type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b, ast.Mod: lambda a, b: a % b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b,
    ast.FloorDiv: lambda a, b: int(a / b),  # C truncates toward zero
}


def _c_literal(m: Match[str]) -> str:
    lit = m.group(1)
    if len(lit) > 1 and lit[0] == "0" and lit[1] not in "xX":
        return "0o" + lit[1:]
    return lit


def eval_c_int(expr: str, symbols: Optional[Mapping[str, str]] = None, depth: int = 0) -> int:
    """Evaluate an integer C constant expression; identifiers from symbols
    (raises ValueError saying why it cannot)."""
    if depth > 20:
        raise ValueError("macro nesting too deep")
    expr = expr.strip()
    expr = re.sub(r"'(\\?.)'", lambda m: str(ord(m.group(1)[-1])), expr)

    def ident(m: Match[str]) -> str:
        name = m.group()
        if symbols and name in symbols:
            return "(" + str(eval_c_int(symbols[name], symbols, depth + 1)) + ")"
        raise ValueError(f"unknown symbol {name}")

    expr = re.sub(r"\b(?!0[xX])[A-Za-z_]\w*\b", ident, expr)
    expr = C_INT.sub(_c_literal, expr)
    expr = re.sub(r"(?<![/])/(?![/])", "//", expr)
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ValueError("not a constant expression") from None
    return _ast_int(tree.body)


def _ast_int(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        v = _ast_int(node.operand)
        return -v if isinstance(node.op, ast.USub) else ~v if isinstance(node.op, ast.Invert) else v
    if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
        a, b = _ast_int(node.left), _ast_int(node.right)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise ValueError("division by zero")
        return BINOPS[type(node.op)](a, b)
    raise ValueError("not a constant expression")


def c_fields(text: str, start: int, end: int) -> Dict[str, Field]:
    """'.field = value' items of an initializer body: {field: (value, offset)}."""
    fields = {}
    for piece, off in split_top(text, start, end):
        m = re.match(r"\s*\.(\w+)\s*=\s*(.*)\Z", piece, re.S)
        if m:
            fields[m.group(1)] = (m.group(2).strip(), off + m.start(2))
    return fields


def c_string(value: Optional[str]) -> Optional[str]:
    """The contents of a C string literal, None if value is not one."""
    m = re.fullmatch(r'\s*"((?:[^"\\]|\\.)*)"\s*', value or "")
    return m.group(1) if m else None


def c_flag(value: Optional[str], flag: str) -> bool:
    return re.search(r"\b" + flag + r"\b", value or "") is not None


def runtime_updates(cf: CFile, arrays: Sequence[str]) -> Dict[str, List[Update]]:
    """'array[i].field op value;' statements of the arrays named: the
    changes a driver makes to its tables at run time."""
    out: Dict[str, List[Update]] = {}
    for m in re.finditer(r"\b(\w+)\[(\d+)\]\.(flags|exit_latency|target_residency)\s*(\|=|&=|=)"
                         r"\s*([^;]+);", cf.text):
        if m.group(1) in arrays:
            out.setdefault(m.group(1), []).append(
                (int(m.group(2)), m.group(3), m.group(4), " ".join(m.group(5).split()),
                 cf.line(m.start()), cf.function_at(m.start())))
    return out


class MacroSet:
    """Object- and function-like macros from a C file and headers."""

    def __init__(self, cfiles: Sequence[CFile]) -> None:
        self.obj: Dict[str, str] = {}
        self.fn: Dict[str, Tuple[List[str], str]] = {}
        for cf in cfiles:
            self.obj.update(cf.defines)
            self.fn.update(cf.fmacros)

    def expand(self, text: str, depth: int = 0) -> str:
        """text with its outer macro expanded, recursively (a state
        initializer such as ARM_CPUIDLE_WFI_STATE_PWR(400) becomes its
        braces)."""
        text = text.strip()
        if depth > 10:
            return text
        m = re.fullmatch(r"(\w+)\s*(?:\((.*)\))?", text, re.S)
        if not m:
            return text
        if m.group(2) is not None and m.group(1) in self.fn:
            params, body = self.fn[m.group(1)]
            args = [a.strip() for a in m.group(2).split(",")]
            for p, v in zip(params, args):
                body = re.sub(r"\b" + re.escape(p) + r"\b", v, body)
            return self.expand(body, depth + 1)
        if m.group(2) is None and m.group(1) in self.obj:
            return self.expand(self.obj[m.group(1)], depth + 1)
        return text


def included_headers(src: str, cf: CFile) -> List[CFile]:
    """The arch <asm/...> and local "..." headers a C file includes, read
    for their macros (state initializers such as ARM_CPUIDLE_WFI_STATE)."""
    out: List[CFile] = []
    for kind, name in re.findall(r'^#\s*include\s*([<"])([^>"]+)[>"]', cf.text, re.M):
        if kind == "<" and name.startswith("asm/"):
            arches = sorted(os.listdir(os.path.join(src, "arch")))
            cands = [f"arch/{a}/include/{name}" for a in arches]
        elif kind == '"':
            cands = [os.path.join(os.path.dirname(cf.rel), name)]
        else:
            continue
        out.extend(CFile(src, c) for c in cands if os.path.isfile(os.path.join(src, c)))
    return out

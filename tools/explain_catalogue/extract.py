"""Read the message strings out of source text, for tools/gen_explain_catalogue.py.

Our own code: it contains no code of the projects it reads. It tokenises C/C++, Python and Go
source just far enough to find the string literals passed to the calls that print or raise an
error, and turns each message into a template: its fixed text kept, every part filled in at run
time (printf conversions, f-string fields, str.format fields, c10::str arguments, Go verbs)
replaced by the wildcard `{}`. Literal braces are doubled ({{ }}), as in str.format.
"""
from __future__ import annotations

import ast
import re
from typing import Iterator, List, Optional, Sequence, Tuple

WILD = "{}"
_PRINTF = re.compile(r"%[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L|q)?[diouxXeEfgGcspnaA]"
                     r"|%[-+ #0]*\d*[vwTtqbU]")   # Go verbs
_ESC = {"n": " ", "t": " ", "r": " ", '"': '"', "'": "'", "\\": "\\", "0": ""}


def _brace(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def printf_template(fmt: str) -> str:
    """'Cuda failure %d '%s'' -> 'Cuda failure {} '{}''; '%%' is a literal '%'."""
    out, pos = [], 0
    for m in re.finditer(r"%%|" + _PRINTF.pattern, fmt):
        out.append(_brace(fmt[pos:m.start()]))
        out.append("%" if m.group() == "%%" else WILD)
        pos = m.end()
    out.append(_brace(fmt[pos:]))
    return "".join(out)


# --- C and C++ -------------------------------------------------------------------------------

def _c_string(src: str, i: int) -> Tuple[str, int]:
    """The literal starting at src[i] == '"' (escapes resolved), and the index after it."""
    out, i = [], i + 1
    while i < len(src) and src[i] != '"':
        if src[i] == "\\" and i + 1 < len(src):
            out.append(_ESC.get(src[i + 1], src[i + 1]))
            i += 2
            continue
        out.append(src[i])
        i += 1
    return "".join(out), i + 1


def c_call_args(src: str, open_paren: int) -> Tuple[List[List[Tuple[str, str]]], int]:
    """The top-level arguments of the call whose '(' is at src[open_paren]: each a list of
    tokens ('s', literal) or ('x', other code); and the index after the closing ')'."""
    args: List[List[Tuple[str, str]]] = [[]]
    depth, i, code = 0, open_paren + 1, []

    def flush():
        if "".join(code).strip():
            args[-1].append(("x", "".join(code).strip()))
        code.clear()

    while i < len(src):
        c = src[i]
        if c == '"':
            flush()
            lit, i = _c_string(src, i)
            args[-1].append(("s", lit))
            continue
        if c == "'" and depth >= 0:
            j = src.find("'", i + 2 if src[i + 1:i + 2] == "\\" else i + 1)
            code.append(src[i:j + 1])
            i = j + 1
            continue
        if src.startswith("//", i):
            i = src.find("\n", i)
            i = len(src) if i < 0 else i
            continue
        if src.startswith("/*", i):
            i = src.find("*/", i) + 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                flush()
                return args, i + 1
            depth -= 1
        elif c == "," and depth == 0:
            flush()
            args.append([])
            i += 1
            continue
        code.append(c)
        i += 1
    return args, i


def _printf_arg(tokens: Sequence[Tuple[str, str]]) -> Optional[str]:
    """A printf format built from adjacent literals and macros ("%" PRIu64, "x" #call "y")."""
    if not any(k == "s" for k, _ in tokens):
        return None
    parts = []
    for kind, text in tokens:
        if kind == "s":
            parts.append(text)
        elif re.fullmatch(r"PRI[diouxX](?:8|16|32|64|PTR|MAX)", text) and parts and parts[-1].endswith("%"):
            parts[-1] = parts[-1][:-1] + "%d"
        else:
            parts.append("%s")           # #call, a macro spliced in
    return "".join(parts)


def c_printf_messages(src: str, calls: Sequence[str]) -> Iterator[Tuple[int, str]]:
    """(line, template) for every call NAME("format", ...) of the given printf-like calls."""
    pat = re.compile(r"\b(?:%s)\s*\(" % "|".join(map(re.escape, calls)))
    for m in pat.finditer(src):
        args, _ = c_call_args(src, m.end() - 1)
        for arg in args[:2]:            # the format is the first argument, or the second (fprintf)
            fmt = _printf_arg(arg)
            if fmt is not None:
                yield src.count("\n", 0, m.start()) + 1, printf_template(fmt)
                break


# arguments before the message: a condition, an error type
_SKIP = {"TORCH_CHECK": 1, "AT_CHECK": 1, "AT_ASSERT": 1, "TORCH_INTERNAL_ASSERT": 1, "TORCH_CHECK_WITH": 2,
         "C10_THROW_ERROR": 1, "C10D_THROW_ERROR": 1, "TORCH_CHECK_VALUE": 1, "TORCH_CHECK_INDEX": 1}


def c_concat_messages(src: str, calls: Sequence[str]) -> Iterator[Tuple[int, str]]:
    """(line, template) for calls whose arguments are concatenated into the message
    (TORCH_CHECK(cond, "a", x, "b"), c10::str(...), AT_ERROR(...), throw std::runtime_error(...))."""
    pat = re.compile(r"\b(%s)\s*\(" % "|".join(map(re.escape, calls)))
    for m in pat.finditer(src):
        skip_first = _SKIP.get(m.group(1), 0)
        args, _ = c_call_args(src, m.end() - 1)
        parts = []
        for arg in args[skip_first:]:
            for kind, text in arg:
                parts.append(_brace(text) if kind == "s" else WILD)
        if any(k == "s" for a in args[skip_first:] for k, _ in a):
            yield src.count("\n", 0, m.start()) + 1, "".join(parts)


# --- Python ----------------------------------------------------------------------------------

_PY_CALLS = {"warn", "warning", "error", "exception", "critical", "fatal", "print", "info", "exit",
             "RuntimeError", "OSError", "ImportError", "ValueError", "EnvironmentError", "AssertionError"}
_MSG_NAME = re.compile(r"msg|message|err|warn|reason|text|prefix|hint", re.I)


def py_const_template(text: str) -> str:
    """A Python string that is formatted later: printf conversions (with a mapping key too,
    %(name)s), str.format fields and string.Template fields (${name}, $name) are wildcards."""
    out, pos = [], 0
    for m in re.finditer(r"%%|%\(\w+\)[-+ #0]*\d*(?:\.\d+)?[diouxXeEfgGcrsa]|" + _PRINTF.pattern + r"|\{\{|\}\}|\{[^{}\s]*\}|\$\{\w+\}|\$[A-Za-z_]\w*", text):
        out.append(_brace(text[pos:m.start()]))
        g = m.group()
        out.append("%" if g == "%%" else _brace(g[0]) if g in ("{{", "}}") else WILD)
        pos = m.end()
    out.append(_brace(text[pos:]))
    return "".join(out)


def _py_str(node: ast.AST) -> Optional[str]:
    """The template of a string expression, or None when the expression is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return py_const_template(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(_py_str(v) or WILD if isinstance(v, ast.Constant) else WILD for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _py_str(node.left), _py_str(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else WILD) + (right if right is not None else WILD)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        fmt = node.left
        if isinstance(fmt, ast.Constant) and isinstance(fmt.value, str):
            return printf_template(fmt.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        return re.sub(r"(?<!\{)\{[^{}]*\}(?!\})", WILD, node.func.value.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
        return None
    return None


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def py_messages(src: str, extra_calls: Sequence[str] = ()) -> Iterator[Tuple[int, str]]:
    """(line, template) for strings raised, warned, logged or printed (or passed to one of a
    project's own logging calls, `extra_calls`), and strings assigned or appended to a name or
    attribute that says it is a message (msg = f"..."; raise RuntimeError(msg); err.strerror += ...)."""
    calls = _PY_CALLS | set(extra_calls)
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        values: List[ast.AST] = []
        if isinstance(node, ast.Call):
            if _callee(node) in calls or _callee(node).endswith(("Error", "Exception")):
                values = list(node.args[:2])
            values += [k.value for k in node.keywords if k.arg and _MSG_NAME.search(k.arg)]
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            # a name or an attribute: torch/__init__.py appends to an OSError's text with
            # `err.strerror += f' Error loading "{dll}" or one of its dependencies.'`
            if any(_MSG_NAME.search(t.id if isinstance(t, ast.Name) else t.attr)
                   for t in targets if isinstance(t, (ast.Name, ast.Attribute))):
                values = [node.value]
        for v in values:
            t = _py_str(v)
            if t is not None:
                yield getattr(v, "lineno", getattr(node, "lineno", 0)), t


# --- Go --------------------------------------------------------------------------------------

_GO = re.compile(r'\b(?:Errorf|Warnf|Warningf|Fatalf|Infof|Printf|Wrapf|Wrap|New|Error|Warning)\(\s*'
                 r'(?:[a-zA-Z_.]+,\s*)?"((?:[^"\\\n]|\\.)*)"')


def go_messages(src: str) -> Iterator[Tuple[int, str]]:
    for m in _GO.finditer(src):
        text = re.sub(r"\\(.)", lambda e: _ESC.get(e.group(1), e.group(1)), m.group(1))
        yield src.count("\n", 0, m.start()) + 1, printf_template(text)


# --- what is worth keeping -------------------------------------------------------------------

def tidy(template: str) -> str:
    """Whitespace collapsed as explain's normaliser does, quotes and slashes straightened, and
    the wildcards at either end dropped (a search needs only the fixed text between them)."""
    t = " ".join(template.replace("\\", "/").replace("`", "'").split())
    t = re.sub(r"(?:\{\}\s*)+(?=\{\})", "", t)             # runs of wildcards are one
    # a wildcard at either end, and the punctuation that only frames it ("{},", "'{}'"), say
    # nothing a search needs
    while True:
        u = re.sub(r"^[^\w{}]*\{\}|\{\}[^\w{}]*$", "", t).strip()
        if u == t:
            return t
        t = u


def literal_runs(template: str) -> List[str]:
    return [" ".join(p.replace("{{", "{").replace("}}", "}").split())
            for p in re.split(r"(?<!\{)\{\}(?!\})", template)]


def worth_keeping(template: str) -> bool:
    """A message whose fixed text can find it again: a literal run of 12+ characters with two
    words in it (not 'Error: {}' or '{} {}')."""
    runs = literal_runs(template)
    best = max(runs, key=len, default="")
    return len(best) >= 12 and len(re.findall(r"[A-Za-z]{2,}", best)) >= 2

"""Which programs the host runs: every executable that the tests, harnesses and host scripts call.

Read statically from the tree, by language:

- shell (host scripts, Makefile recipes): every simple command's name, parsed with tree-sitter's
  bash grammar; a command given to a wrapper (``timeout 5 curl``, ``ip netns exec NS curl``,
  ``runuser -u U -- psql``, ``sh -c '…'``) counts too;
- Python: the list an ``argv`` starts with, where it is given to ``subprocess``, ``pexpect`` or a
  harness helper that runs it (``run_checked``, ``Lab.exec``), or assigned to a name such as
  ``argv`` or ``cmd``; ``shell=True`` strings and ``["sh", "-c", …]`` are read as shell;
- Go: ``exec.Command`` and ``exec.CommandContext`` with a literal program name.

What runs elsewhere is left out: the QEMU guest's tests (``tests/vm/guest``), what a ``chroot``
or ``ssh`` runs, the scripts that run inside a built root or on the appliance itself.

    python -m tests.deps.commands      # every command, with where it is used
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import tree_sitter_bash
from tree_sitter import Language, Parser

REPO = Path(__file__).resolve().parents[2]

# Host code, by language. Paths are globs relative to the repository.
SHELL_FILES = (
    ".ci/run",
    "Makefile",
    "agents/Makefile",
    "appliance/kernel/ip_vs_dllc/Makefile",
    "appliance/debian/rules",
    "appliance/debian/build.sh",
    "appliance/dev/*.sh",
    "images/build.sh",
    "images/scripts/boot.sh",
    "images/scripts/make-ova.sh",
    "tests/**/*.sh",
)
PYTHON_FILES = (
    "api/**/*.py",
    "appliance/firstboot/tests/*.py",
    "images/tests/*.py",
    "tests/**/*.py",
    "conftest.py",
)
GO_FILES = ("agents/**/*.go", "tests/compose/*.go")
SCRIPT_FILES = ("webui/*.ts", "webui/scripts/*.mjs", "webui/e2e/**/*.ts", "tests/bench/*.mjs")
# Run somewhere else than the host: in the QEMU guest, in a chroot of a built root, on the
# appliance (whose packages' Depends bring their tools).
ELSEWHERE = (
    "tests/vm/guest/*",
    "tests/packaging/in-root.sh",
    "agents/**/guest_*_test.go",
    "api/**/migrations/*.py",
)
MAKEFILES = {"Makefile", "rules"}

# Shell words that are not programs: keywords, bash builtins and the test-command brackets.
_BUILTIN_WORDS = """! [ [[ ]] { } . : alias bg bind break builtin caller cd command compgen complete compopt continue
    declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill
    let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source
    suspend test times trap true type typeset ulimit umask unalias unset wait for do done if then else fi
    while until case esac function select in"""
SHELL_BUILTINS = set(_BUILTIN_WORDS.split())

# Wrappers: how many words (options aside) come before the command they run. None: that
# command runs elsewhere (its name is not the host's concern).
WRAPPERS = {
    "timeout": 1,  # timeout [opts] DURATION CMD
    "setsid": 0,
    "nohup": 0,
    "nice": 0,
    "stdbuf": 0,
    "env": 0,
    "xargs": 0,
    "exec": 0,
    "command": 0,
    "flock": 1,
    "runuser": 0,  # runuser -u USER -- CMD
    "unshare": 0,
    "nsenter": 0,
    "taskset": 1,
    "sudo": 0,
    "time": 0,
    "chroot": None,
    "ssh": None,
}
# Options of wrappers that take a value (so the value is not the command).
WRAPPER_OPTIONS_WITH_VALUE = {
    *("-u", "-k", "--kill-after", "-s", "--signal", "-n", "-w", "-g", "-t", "-I", "-P", "-E"),
    "--propagation",  # unshare --propagation private
}


@dataclass(frozen=True, order=True)
class Use:
    """One call of a program: where, and which program."""

    command: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def _files(patterns) -> list[Path]:
    found = set()
    for pattern in patterns:
        found.update(p for p in REPO.glob(pattern) if p.is_file())
    elsewhere = {p for pattern in ELSEWHERE for p in REPO.glob(pattern)}
    skip = ("node_modules", ".venv", ".cache", ".build", "artifacts")
    return sorted(p for p in found - elsewhere if not any(part in skip for part in p.relative_to(REPO).parts))


def _is_program_name(word: str) -> bool:
    """A literal program name: no expansion, no path into the tree, no assignment."""
    if not word or "$" in word or "`" in word or "=" in word or word.startswith(("-", ".", "~")):
        return False
    if "/" in word and not word.startswith(("/usr/", "/bin/", "/sbin/")):
        return False  # a program of the repository, or a variable path
    return re.fullmatch(r"[A-Za-z0-9_./+-]+", word) is not None


def unwrap(words: list[str]) -> list[str]:
    """The programs a command line runs on the host: its name and what wrappers run after it.

    ``ip netns exec NS curl`` gives ip and curl; ``chroot ROOT apt-get`` gives chroot only."""
    programs = []
    while words:
        name = words[0]
        if not _is_program_name(name):
            return programs
        base = name.rsplit("/", 1)[-1]
        programs.append(name)
        if base in ("sh", "bash") and len(words) > 2 and words[1] == "-c":
            return programs + [p for p in shell_programs(words[2]) if p not in programs]
        if base == "ip" and words[1:3] == ["netns", "exec"]:
            words = words[4:]
            continue
        if base not in WRAPPERS or WRAPPERS[base] is None:
            return programs
        rest = words[1:]
        while rest and rest[0].startswith("-"):
            option = rest.pop(0)
            if option == "--":
                break
            if option in WRAPPER_OPTIONS_WITH_VALUE and rest:
                rest.pop(0)
        while base == "env" and rest and "=" in rest[0]:
            rest.pop(0)
        words = rest[WRAPPERS[base] :]
    return programs


# -- shell -----------------------------------------------------------------------------------


@cache
def _bash() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


def _word_text(node) -> str | None:
    """A literal word's text (quotes removed), or None when it expands anything."""
    if node.type in ("word", "number"):
        return node.text.decode()
    if node.type == "raw_string":
        return node.text.decode()[1:-1]
    if node.type == "string":
        if any(child.type not in ('"', "string_content") for child in node.children):
            return None
        return node.text.decode()[1:-1]
    if node.type == "concatenation":
        parts = [_word_text(child) for child in node.children]
        return None if None in parts else "".join(parts)
    return None


def shell_uses(source: str, path: str, first_line: int = 0) -> list[Use]:
    tree = _bash().parse(source.encode())
    uses = []

    def visit(node):
        if node.type == "command":
            words = []
            previous_end = None
            for child in node.children:
                if child.type in ("variable_assignment", "file_redirect", "herestring_redirect"):
                    previous_end = child.end_byte
                    continue
                if child.type == "command_name" and child.start_byte == previous_end:
                    continue  # the grammar split an assignment (a=$x-$y.log cmd): the command comes next
                text = _word_text(child.children[0] if child.type == "command_name" else child)
                if text is None and not words:
                    break  # the program is not a literal: $GO, "${PYTEST[@]}"
                words.append(text if text is not None else "$")
            for program in unwrap(words):
                uses.append(Use(program, path, first_line + node.start_point[0] + 1))
        for child in node.children:
            visit(child)

    visit(tree.root_node)
    functions = shell_functions(source)
    return [u for u in uses if u.command not in SHELL_BUILTINS and u.command not in functions]


def shell_programs(source: str) -> list[str]:
    """The programs a shell snippet runs (for ``sh -c`` strings)."""
    return [use.command for use in shell_uses(source, "")]


_MAKE_REFERENCE = re.compile(r"\$\((?:[^()]|\([^()]*\))*\)|\$\{[^}]*\}|\$[@<^*?%]")


def makefile_uses(text: str, path: str) -> list[Use]:
    """Recipe lines (tab-indented, continuations joined), with make's references as $VAR."""
    uses = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line, start = lines[i], i
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].lstrip("\t")
        i += 1
        if not line.startswith("\t"):
            continue
        recipe = line.lstrip("\t").lstrip("@-+").replace("$$", "\0").replace("$(CC)", "cc").replace("$(MAKE)", "make")
        recipe = _MAKE_REFERENCE.sub("$MAKEVAR", recipe).replace("\0", "$")
        uses += shell_uses(recipe, path, start)
    return uses


def shell_file_uses(file: Path) -> list[Use]:
    rel = str(file.relative_to(REPO))
    text = file.read_text()
    if file.name in MAKEFILES:
        return makefile_uses(text, rel)
    return shell_uses(text, rel)


# -- Python ----------------------------------------------------------------------------------

# Calls that run their (first list) argument as a program.
PY_RUNNERS = {"run", "Popen", "check_output", "check_call", "call", "spawn", "run_checked", "exec", "_as_owner"}
ARGV_NAMES = re.compile(r"(^|_)(argv|cmd|command)s?$")
# A program named by its absolute path, such as "/usr/bin/chromium".
_ABSOLUTE_PROGRAM = re.compile(r"/usr/(s?bin|lib/postgresql/\d+/bin)/[A-Za-z0-9_.+-]+")


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _found_program(node) -> str | None:
    """The program of ``_bin("psql")`` or ``shutil.which("haproxy")``: a finder given one name."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) and _is_program_name(value) else None
    return None


def _literal_argv(node, programs) -> list[str] | None:
    """A list or tuple literal's leading words; a starred prefix (``*lab.lb_exec_prefix``) runs
    the rest in a namespace, so the words after it count; ``programs`` names constants."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    words = []
    for element in node.elts:
        if isinstance(element, ast.Starred) and not words:
            continue
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            words.append(element.value)
        elif isinstance(element, ast.Name) and element.id in programs and not words:
            words.append(programs[element.id])
        elif not words and (program := _found_program(element)):
            words.append(program)
        else:
            words.append("$")
    return words or None


def _program_constant(node) -> str | None:
    """``"haproxy"``, or the default of ``os.environ.get("FULCRUM_HAPROXY", "haproxy")``."""
    if isinstance(node, ast.Call) and _call_name(node) in ("get", "getenv") and len(node.args) == 2:
        node = node.args[1]
    if isinstance(node, ast.BoolOp):  # os.environ.get(...) or shutil.which(...) or "/usr/sbin/haproxy"
        node = node.values[-1]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_program_name(node.value):
        return node.value
    return None


def python_file_uses(file: Path) -> list[Use]:
    return python_uses(file.read_text(), str(file.relative_to(REPO)))


def python_uses(text: str, rel: str) -> list[Use]:
    tree = ast.parse(text, rel)
    uses = []

    def add(words, line):
        uses.extend(Use(p, rel, line) for p in unwrap(words) if p not in SHELL_BUILTINS)

    # Upper-case module constants that name a program (HAPROXY = os.environ.get(..., "haproxy")),
    # counted where an argv starts with them.
    programs = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper() and (program := _program_constant(node.value)):
                programs[name] = program
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ABSOLUTE_PROGRAM.fullmatch(node.value):
            add([node.value], node.lineno)
        if isinstance(node, ast.Call) and _call_name(node) == "which" and (program := _found_program(node)):
            add([program], node.lineno)
        if isinstance(node, ast.Call) and _call_name(node) in PY_RUNNERS:
            shell = any(k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords)
            for arg in node.args[:2]:
                if shell and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    uses.extend(Use(u.command, rel, node.lineno) for u in shell_uses(arg.value, rel))
                elif (words := _literal_argv(arg, programs)) is not None:
                    add(words, node.lineno)
                elif _call_name(node) == "spawn" and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    add(shlex.split(arg.value)[:1], node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [
                t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in targets
            ]
            if any(ARGV_NAMES.search(n) for n in names) and (words := _literal_argv(node.value, programs)) is not None:
                add(words, node.lineno)
    return uses


# -- Go --------------------------------------------------------------------------------------

_GO_EXEC = re.compile(r'exec\.Command(?:Context)?\(\s*(?:[A-Za-z_.()]+,\s*)?"([^"]+)"((?:\s*,\s*"[^"]*")*)')
# exec.LookPath("keepalived"); haproxyBin: "haproxy"; fs.StringVar(&o.haproxyBin, "haproxy", "haproxy", ...)
_GO_PROGRAM = re.compile(
    r'exec\.LookPath\("([^"]+)"\)|\w+Bin:\s*"([^"]+)"|StringVar\(&[\w.]+Bin,\s*"[^"]*",\s*"([^"]+)"'
)


def go_file_uses(file: Path) -> list[Use]:
    return go_uses(file.read_text(), str(file.relative_to(REPO)))


def go_uses(text: str, rel: str) -> list[Use]:
    uses = []
    for match in _GO_EXEC.finditer(text):
        words = [match.group(1), *re.findall(r'"([^"]*)"', match.group(2))]
        line = text.count("\n", 0, match.start()) + 1
        uses.extend(Use(p, rel, line) for p in unwrap(words) if p not in SHELL_BUILTINS)
    for match in _GO_PROGRAM.finditer(text):
        program = next(group for group in match.groups() if group)
        if _is_program_name(program):
            uses.append(Use(program, rel, text.count("\n", 0, match.start()) + 1))
    return uses


# -- JavaScript and TypeScript (the console's build and browser tests) ---------------------

_JS_PROGRAM = re.compile(r"""['"](/usr/s?bin/[A-Za-z0-9_.+-]+)['"]|execFile(?:Sync)?\(\s*['"]([^'"]+)['"]""")


def script_file_uses(file: Path) -> list[Use]:
    rel = str(file.relative_to(REPO))
    text = file.read_text()
    uses = []
    for match in _JS_PROGRAM.finditer(text):
        program = next(group for group in match.groups() if group)
        uses.append(Use(program, rel, text.count("\n", 0, match.start()) + 1))
    return uses


# -- all -------------------------------------------------------------------------------------


def shell_functions(source: str) -> set[str]:
    """The names of the functions a shell file defines."""
    names = set()

    def visit(node):
        if node.type == "function_definition" and (name := node.child_by_field_name("name")) is not None:
            names.add(name.text.decode())
        for child in node.children:
            visit(child)

    visit(_bash().parse(source.encode()).root_node)
    return names


def host_uses() -> dict[str, list[Use]]:
    """Every program the host runs, with each place that runs it."""
    uses = []
    functions = set()  # those of a file the scripts source (appliance/dev/rootlib.sh) too
    shell_files = _files(SHELL_FILES)
    for file in shell_files:
        uses += shell_file_uses(file)
        functions |= shell_functions(file.read_text())
    shell_paths = {str(f.relative_to(REPO)) for f in shell_files}
    uses = [u for u in uses if not (u.path in shell_paths and u.command in functions)]
    for file in _files(PYTHON_FILES):
        uses += python_file_uses(file)
    for file in _files(GO_FILES):
        uses += go_file_uses(file)
    for file in _files(SCRIPT_FILES):
        uses += script_file_uses(file)
    by_command = defaultdict(list)
    for use in sorted(set(uses)):
        by_command[use.command].append(use)
    return dict(sorted(by_command.items()))


def main() -> int:
    for command, uses in host_uses().items():
        print(f"{command:28} {len(uses):3}  {uses[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

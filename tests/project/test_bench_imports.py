"""The benchmark code's structure (bench/): no import cycle (function-level imports count: one that exists to dodge
a cycle is still a cycle), no run state kept in module variables that code mutates (a run's state lives in the
Context bench.py's main() builds, benchlib/context.py), and importing any module does nothing but define things:
no file or directory written, no process started, no socket, no directory listed, no environment variable read.
Needs no build and no broker. Each check also runs on a small tree made to break it, so it can fail."""
import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
PACKAGES = ("benchlib", "tables")
# methods that change a dict, list or set in place
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove", "add",
            "discard", "sort", "reverse", "__setitem__"}


def modules(root):
    """{module name: path} of bench.py and the packages' modules, as bench.py imports them (its folder on sys.path)."""
    out = {p.stem: p for p in root.glob("*.py")}
    for pkg in PACKAGES:
        for p in sorted((root / pkg).glob("*.py")):
            out[pkg if p.stem == "__init__" else f"{pkg}.{p.stem}"] = p
    return out


def imports(path, known):
    """The bench modules a file imports, at any depth (module level, in functions, under if/try)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                     for a in node.names]
        else:
            continue
        found.update(n for n in names if n in known)
    return found


def graph(root):
    """{module: the bench modules it imports}."""
    known = modules(root)
    return {name: imports(path, known) for name, path in known.items()}


def cycles(g):
    """Strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in g.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def mutable_module_state(root):
    """Every module-level instance of a class (a singleton such as a log or a settler: its methods change it), every
    `global` statement, and module-level names bound to a dict, list or set (display or comprehension) that some code
    changes: item assignment, augmented assignment, a mutating method, an attribute set. Constants (tables of settings
    nobody changes) pass."""
    known = modules(root)
    trees = {name: ast.parse(path.read_text(), str(path)) for name, path in known.items()}
    state, found = {}, []
    for name, tree in trees.items():
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) and node.value else []
            value = getattr(node, "value", None)
            container = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))
            instance = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id[:1].isupper()
            for t in targets:
                if isinstance(t, ast.Name) and (container or instance):
                    state.setdefault(t.id, []).append(name)
                if isinstance(t, ast.Name) and instance:
                    found.append(f"{name}:{node.lineno}: {t.id} = {value.func.id}() at module level")

    def holder(expr):
        """The module-level name an expression is part of (NAME[...].x, module.NAME[...]), if it is one."""
        while isinstance(expr, (ast.Subscript, ast.Attribute)):
            if isinstance(expr, ast.Attribute) and expr.attr in state:
                return expr.attr
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) and expr.id in state else None

    for name, tree in trees.items():
        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.Global):
                hit = "global " + ", ".join(node.names)
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                h = holder(node.value)
                hit = h and f"{h}[...] or {h}.attr assigned"
            elif isinstance(node, ast.AugAssign):
                h = holder(node.target)
                hit = h and f"{h} changed in place"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                h = holder(node.func.value)
                hit = h and f"{h}.{node.func.attr}()"
            if hit:
                found.append(f"{name}:{node.lineno}: {hit}")
    return found


PROBE = r"""
import ast, collections.abc, json, os, sys
root, names = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, root)
# the other modules bench code imports (the standard library), imported first: what they do on import is not bench's
for dirpath, _, files in os.walk(root):
    for f in files:
        if f.endswith(".py"):
            for node in ast.walk(ast.parse(open(os.path.join(dirpath, f)).read())):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
                for m in mods:
                    if m.split(".")[0] not in ("bench", "benchlib", "tables"):
                        try:
                            __import__(m)
                        except ImportError:
                            pass
events, env_reads = [], []
WATCH = ("open", "os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.truncate", "os.chmod", "os.symlink",
         "os.link", "shutil.rmtree", "shutil.copyfile", "shutil.move", "subprocess.Popen", "os.system", "os.exec",
         "os.posix_spawn", "os.spawn", "os.fork", "os.kill", "socket.bind", "socket.connect", "glob.glob",
         "os.listdir", "os.scandir", "os.walk", "signal.signal")

def ours():
    f = sys._getframe(2)
    if f.f_code.co_filename.startswith("<frozen importlib"):
        return False            # the import system itself (finding and reading the module's file)
    while f:
        if f.f_code.co_filename.startswith(root):
            return True
        f = f.f_back
    return False

def hook(event, args):
    if event in WATCH and not (event == "open" and (len(args) < 2 or args[1] in (None, "r", "rb"))) and ours():
        events.append(f"{event} {args[0]!r}")

class Env(collections.abc.MutableMapping):
    def __init__(self, real):
        self.real = real
    def __getitem__(self, k):
        if ours():
            env_reads.append(k)
        return self.real[k]
    def __setitem__(self, k, v):
        self.real[k] = v
    def __delitem__(self, k):
        del self.real[k]
    def __iter__(self):
        return iter(self.real)
    def __len__(self):
        return len(self.real)

sys.addaudithook(hook)
os.environ = Env(os.environ)
for n in names:
    __import__(n)
print(json.dumps({"events": events, "env": sorted(set(env_reads))}))
"""


def import_effects(root, scratch):
    """What importing every module does, in a fresh interpreter started in an empty directory under scratch (an
    empty directory: what is in it afterwards was created by the import)."""
    names = sorted(modules(root))
    cwd = scratch / "cwd"
    cwd.mkdir()
    env = dict(os.environ, KC_BUILD=str(scratch / "build"), KC_BENCH_LOG_DIRS=str(scratch / "logs"))
    p = subprocess.run([sys.executable, "-B", "-c", PROBE, str(root), json.dumps(names)], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["created"] = sorted(str(x.relative_to(scratch)) for x in scratch.rglob("*") if x != cwd)
    return res


def test_no_import_cycle():
    g = graph(BENCH)
    assert len(g) >= 15, sorted(g)      # the modules were found
    assert cycles(g) == []


def test_no_mutable_module_state():
    assert mutable_module_state(BENCH) == []


def test_importing_does_nothing(tmp_path):
    res = import_effects(BENCH, tmp_path)
    assert res == {"events": [], "env": [], "created": []}


BROKEN = {
    "bench.py": "from benchlib import common\n",
    "benchlib/__init__.py": "",
    "benchlib/common.py": textwrap.dedent("""\
        import os
        OUT = os.environ.get("KC_BUILD", ".")
        os.makedirs(os.path.join(OUT, "x"), exist_ok=True)
        STATE = {"rows": []}


        def report_rows():
            from tables import t1   # an import made inside a function to dodge the cycle
            return t1.rows()
        """),
    "tables/__init__.py": "",
    "tables/t1.py": textwrap.dedent("""\
        from benchlib import common


        def rows():
            common.STATE["rows"].append(1)
            return common.STATE["rows"]
        """),
}


def test_checks_can_fail(tmp_path):
    root = tmp_path / "bench"
    for name, text in BROKEN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert cycles(graph(root)) == [["benchlib.common", "tables.t1"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert mutable_module_state(root) == ["tables.t1:5: STATE.append()"]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    res = import_effects(root, scratch)
    assert res["env"] == ["KC_BUILD"]
    assert res["created"] == ["build", "build/x"]
    assert [e.split()[0] for e in res["events"]] == ["os.mkdir", "os.mkdir"]   # build, build/x


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

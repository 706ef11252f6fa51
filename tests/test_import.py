"""``import fastomkl`` stays light: the estimators, the compiled core and scipy.special load on
first use, and everything the package exports still resolves."""
import json
import subprocess
import sys

HEAVY = ("scipy", "scipy.special", "sklearn", "matplotlib", "tqdm", "fastomkl._core.engine",
         "fastomkl.graph", "fastomkl.vaw")


def _fresh(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_import_loads_no_heavy_module():
    out = _fresh("import sys, json, fastomkl; "
                 f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert json.loads(out) == []


def test_every_export_resolves_and_is_listed():
    out = _fresh("import fastomkl, json; from fastomkl import Raker, VAW2; "
                 "missing = [n for n in fastomkl.__all__ if n not in dir(fastomkl)]; "
                 "bad = [n for n in fastomkl.__all__ if getattr(fastomkl, n, None) is None]; "
                 "print(json.dumps([missing, bad, Raker.__module__, VAW2.__module__]))")
    assert json.loads(out) == [[], [], "fastomkl.raker", "fastomkl.vaw"]


def test_dir_lists_the_public_names_not_the_files_imports():
    out = _fresh("import fastomkl, json; print(json.dumps(dir(fastomkl)))")
    names = json.loads(out)
    assert "Raker" in names and "Polynomial" in names and "__version__" in names
    assert "annotations" not in names and "importlib" not in names


def test_unknown_attribute_is_an_attribute_error():
    _fresh("import fastomkl\ntry:\n    fastomkl.Nope\nexcept AttributeError as e:\n"
           "    assert 'Nope' in str(e)\nelse:\n    raise SystemExit(1)")


def test_a_fresh_process_loads_a_saved_model(tmp_path):
    from fastomkl import OMKLGF, load_dataset
    X, y = load_dataset("airfoil")
    model = OMKLGF(n_components=5, random_state=1).fit(X[:50] / 1e3, y[:50] / 100)
    path = tmp_path / "gf.npz"
    model.save(path)
    out = _fresh(f"import fastomkl; m = fastomkl.load({str(path)!r}); "
                 "print(type(m).__name__, m.n_samples_seen_)")
    assert out.split() == ["OMKLGF", "50"]

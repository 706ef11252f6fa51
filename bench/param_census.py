"""Census of constructor parameter names across the exported estimators.

    python bench/param_census.py [--list] [--json FILE]     (in each build's environment)
    python bench/param_census.py --compare BEFORE.json AFTER.json

Run with the fastomkl to be counted importable (each build's own environment).  Takes every name
in ``fastomkl.__all__`` that is a class with ``get_params`` (an estimator), reads
``inspect.signature(cls.__init__)`` and counts the distinct parameter names, leaving out ``self``,
``*args`` and ``**kwargs`` (so old spellings taken through ``**renamed`` are not counted).  Also
counted: every exported model class, estimator or not (a class with ``learn_one``,
``partial_fit`` or ``predict_learn``).  ``--list`` also prints every name with the number of classes that take
it; ``--json FILE`` writes every model class's names, which ``--compare`` reads back (names over
the classes both versions have, names gone and new).  Prints one JSON object (classes, distinct names, names) on the last line.
"""
from __future__ import annotations

import collections
import inspect
import json
import sys
import warnings


MODEL_METHODS = ("get_params", "learn_one", "partial_fit", "predict_learn")


def census(broad: bool = False) -> dict:
    import fastomkl
    classes = {}
    methods = MODEL_METHODS if broad else MODEL_METHODS[:1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in fastomkl.__all__:
            obj = getattr(fastomkl, name)
            if not (inspect.isclass(obj) and any(hasattr(obj, m) for m in methods)):
                continue
            params = [p.name for p in inspect.signature(obj.__init__).parameters.values()
                      if p.name != "self"
                      and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            classes[name] = params
    uses = collections.Counter(p for params in classes.values() for p in params)
    return {"version_file": fastomkl.__file__, "classes": len(classes),
            "distinct_names": len(uses), "names": dict(sorted(uses.items())),
            "per_class": classes}


def compare(before_path: str, after_path: str) -> None:
    """Names before / after over the same classes, and the names that went and came."""
    b, a = (json.load(open(p))["per_class"] for p in (before_path, after_path))
    common = set(a) & set(b)
    nb = {x for c in common for x in b[c]}
    na = {x for c in common for x in a[c]}
    print(f"model classes before {len(b)}, after {len(a)}; only after: {sorted(set(a) - set(b))}; "
          f"only before: {sorted(set(b) - set(a))}")
    print(f"over the {len(common)} classes of both: {len(nb)} names before, {len(na)} after")
    names_b = {x for v in b.values() for x in v}
    names_a = {x for v in a.values() for x in v}
    print(f"all model classes: {len(names_b)} names before, {len(names_a)} after")
    print(f"names gone: {sorted(names_b - names_a)}")
    print(f"names new: {sorted(names_a - names_b)}")


def main(argv: list[str]) -> int:
    if "--compare" in argv:
        i = argv.index("--compare")
        compare(argv[i + 1], argv[i + 2])
        return 0
    broad = census(broad=True)
    if "--json" in argv:
        with open(argv[argv.index("--json") + 1], "w") as fh:
            json.dump(broad, fh, indent=1)
    result = census()
    print(f"fastomkl from {result['version_file']}")
    print(f"estimator classes exported (get_params): {result['classes']}")
    print(f"distinct constructor parameter names: {result['distinct_names']}")
    extra = sorted(set(broad["per_class"]) - set(result["per_class"]))
    print(f"all exported model classes (also those without get_params: {', '.join(extra) or 'none'}):"
          f" {broad['classes']}, distinct names {broad['distinct_names']}")
    if "--list" in argv:
        for name, n in result["names"].items():
            print(f"  {name}: {n}")
    print(json.dumps({**{k: result[k] for k in ("classes", "distinct_names", "names")},
                      "broad_classes": broad["classes"],
                      "broad_distinct_names": broad["distinct_names"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

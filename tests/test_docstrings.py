"""Every public name is documented (numpy style) with an example, the shared API of every model
too, and every example runs."""
import doctest
import importlib
import inspect
import re

import pytest

import fastomkl
from fastomkl._estimator import _REGISTRY, OnlineEstimator

SHARED_API = ["predict_one", "learn_one", "predict_learn_one", "predict", "partial_fit", "fit",
              "predict_learn", "score", "save", "get_params", "set_params", "n_samples_seen_",
              "feature_names_in_"]
OPTIONAL_API = ["decision_function", "decision_function_one", "predict_proba",
                "predict_proba_one"]
# The modules whose kernel-weight views this suite holds to the same standard.
WEIGHTS_MODULES = {"fastomkl.raker", "fastomkl.graph_omkl", "fastomkl.omkr"}
# Every module holding a public name or a documented shared method (see
# test_every_public_module_runs_its_examples); the optional extras are skipped without them.
DOCTEST_MODULES = ["fastomkl._estimator.base", "fastomkl._estimator.classifiers", "fastomkl._validation", "fastomkl._core.inputs", "fastomkl.kernels",
                   "fastomkl.features", "fastomkl.persistence", "fastomkl.datasets", "fastomkl.compose",
                   "fastomkl.raker", "fastomkl.adaraker", "fastomkl.graph_omkl", "fastomkl.omkr", "fastomkl.vaw",
                   "fastomkl.bandit", "fastomkl.pkawv", "fastomkl.dsg", "fastomkl.graph",
                   "fastomkl.river", "fastomkl.dask"]
OPTIONAL_DEPENDENCY = {"fastomkl.river": "river", "fastomkl.dask": "dask"}
# Modules whose own public functions and classes (their __all__) are documented like the package's.
SUBMODULES = ["fastomkl.dask", "fastomkl.dsg", "fastomkl.graph", "fastomkl.river"]

MODELS = [getattr(fastomkl, name) for name in fastomkl.__all__
          if inspect.isclass(getattr(fastomkl, name))
          and issubclass(getattr(fastomkl, name), OnlineEstimator)]


def public_objects():
    """(qualified name, object) of every public class and function: ``fastomkl.__all__`` and the
    ``__all__`` of SUBMODULES (a submodule whose optional extra is not installed is left out)."""
    found = {}
    modules = [fastomkl]
    for name in SUBMODULES:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name != OPTIONAL_DEPENDENCY.get(name):
                raise
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                found.setdefault(obj, f"{module.__name__}.{name}")
    return sorted((name, obj) for obj, name in found.items())


PUBLIC = public_objects()


def documented_members(cls):
    """(name, function or property getter) of the API members cls has."""
    names = SHARED_API + [n for n in OPTIONAL_API if hasattr(cls, n)]
    weights = inspect.getattr_static(cls, "weights_", None)
    if isinstance(weights, property) and weights.fget.__module__ in WEIGHTS_MODULES:
        names.append("weights_")
    for name in names:
        member = inspect.getattr_static(cls, name)
        yield name, member.fget if isinstance(member, property) else member


def section(doc: str, title: str) -> bool:
    return re.search(rf"^\s*{title}\n\s*-{{{len(title)}}}\n", doc, re.MULTILINE) is not None


def test_every_model_is_checked():
    names = {cls.__name__ for cls in MODELS}
    assert {"Raker", "RakerClassifier", "OMKLGF", "OMKLSFGR", "OMKR", "RFOMKRClassifier",
            "OnlineKernelRegressor", "VAW", "VAWMeta"} <= names
    with_weights = {cls.__name__ for cls in MODELS
                    if "weights_" in dict(documented_members(cls))}
    assert {"Raker", "OMKLGF", "OMKR", "RFOMKR"} <= with_weights


def test_a_missing_docstring_is_reported():
    class Undocumented(fastomkl.Raker):
        def predict_one(self, x):
            return super().predict_one(x)

    _REGISTRY.pop("Undocumented")                  # not a model anyone may load or list
    with pytest.raises(AssertionError, match="predict_one: no Parameters section"):
        test_shared_api_has_numpy_docstrings(Undocumented)


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_shared_api_has_numpy_docstrings(cls):
    problems = []
    for name, member in documented_members(cls):
        doc = inspect.getdoc(member) or ""
        parameters = [p for p in inspect.signature(member).parameters.values()
                      if p.name != "self"]
        if parameters and not section(doc, "Parameters"):
            problems.append(f"{name}: no Parameters section")
        for p in parameters:
            spelled = ("**" if p.kind is p.VAR_KEYWORD else "") + p.name
            if section(doc, "Parameters") and not re.search(rf"^\s*{re.escape(spelled)}\b", doc,
                                                            re.MULTILINE):
                problems.append(f"{name}: parameter {p.name} not described")
        if not section(doc, "Returns"):
            problems.append(f"{name}: no Returns section")
        if not section(doc, "Examples") or ">>> " not in doc:
            problems.append(f"{name}: no Examples section with an example")
    assert not problems, problems


def test_every_public_name_is_checked():
    names = {name for name, _ in PUBLIC}
    assert {f"fastomkl.{name}" for name in fastomkl.__all__ if name != "MAX_ABS_INPUT"} <= names
    assert {"fastomkl.dsg.merge", "fastomkl.dsg.on_stream", "fastomkl.graph.similarity_graph",
            "fastomkl.graph.dominating_set", "fastomkl.river.to_river",
            "fastomkl.dask.fit_data_parallel"} <= names


def test_a_missing_example_is_reported():
    def undocumented():
        """Does nothing."""

    with pytest.raises(AssertionError, match="undocumented: no Examples section"):
        test_public_name_has_an_example("undocumented", undocumented)


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_public_name_has_an_example(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert section(doc, "Examples") and ">>> " in doc, f"{name}: no Examples section with code"


def test_every_public_module_runs_its_examples():
    homes = {obj.__module__ for _, obj in PUBLIC} | {
        member.__module__ for cls in MODELS for _, member in documented_members(cls)}
    assert homes <= set(DOCTEST_MODULES), sorted(homes - set(DOCTEST_MODULES))


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_examples_run(module):
    if module in OPTIONAL_DEPENDENCY:
        pytest.importorskip(OPTIONAL_DEPENDENCY[module])
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = []
    for test in finder.find(importlib.import_module(module)):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, "".join(report)

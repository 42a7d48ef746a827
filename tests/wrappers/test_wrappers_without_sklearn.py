"""Without scikit-learn, ``import minikeras`` works and the wrapper names
exist, and making one says to ``pip install scikit-learn`` (as Keras does).

Runs in a fresh interpreter that cannot import scikit-learn, whether or not
it is installed here.
"""
import os
import subprocess
import sys
import textwrap

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["sklearn"] = None  # import sklearn now raises ImportError
    import minikeras as mk
    assert "minikeras.wrappers" not in sys.modules  # loaded on first use only
    from minikeras.wrappers import SKLearnClassifier, SKLearnRegressor, SKLearnTransformer
    for cls in (SKLearnClassifier, SKLearnRegressor, SKLearnTransformer):
        try:
            cls(model=lambda X, y: None)
        except ImportError as error:
            assert "pip install scikit-learn" in str(error) and cls.__name__ in str(error), error
        else:
            raise AssertionError(f"{cls.__name__} was made without scikit-learn")
    print("ok")
""")


def test_wrappers_without_scikit_learn_name_the_install_command():
    environment = {**os.environ, "PYTHONPATH": REPOSITORY + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=environment,
                            cwd=REPOSITORY, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]

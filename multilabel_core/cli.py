"""The ``mlcore`` command line.

Subcommands::

    mlcore methods                      registered methods and their papers
    mlcore describe DATA                MLRL Table I statistics of a dataset
    mlcore fit METHOD DATA --out MODEL  fit and save a model
    mlcore predict MODEL DATA           predict, and score against DATA's labels
    mlcore evaluate METHOD DATA --cv K  cross-validated metrics (iterative stratification)
    mlcore demo                         the main job: every method on the embedded synthetic data

DATA is a file (Mulan ARFF + XML, MEKA ARFF, LibSVM) or a dataset name looked up in
``--data-home``, then ``$MULTILABEL_CORE_DATA``, then the download cache; the name
``synthetic`` is the embedded correlated dataset.  ``--json`` prints one JSON object.
Bad input ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys

import numpy as np

from .base.solver import CapabilityError

EXIT_USAGE = 2
SYNTHETIC = "synthetic"


class CLIError(Exception):
    """An error reported to the user as one line."""


# ---------------------------------------------------------------- helpers


def parse_param(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` -> (name, value); VALUE is a Python/JSON literal or else a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.isidentifier():
        raise CLIError(f"--param expects NAME=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        lowered = raw.lower()
        value = {"true": True, "false": False, "none": None, "null": None}.get(lowered, raw)
    return name, value


def load_data(data: str, data_home: str | None, random_state: int):
    from .datasets import load_dataset, make_correlated_multilabel

    if data == SYNTHETIC:
        return make_correlated_multilabel(random_state=random_state)
    return load_dataset(data, data_home=data_home)


def jsonable(value):
    """numpy scalars/arrays and NaN -> plain JSON values (NaN -> null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def show_progress(args) -> bool:
    """A progress bar only for a person watching: not with --quiet, --json or a redirected stderr."""
    return not (args.quiet or args.json) and sys.stderr.isatty()


def emit(args, payload: dict, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(jsonable(payload), indent=None if args.compact else 2, allow_nan=False))
    else:
        print("\n".join(lines))


def table(header: list[str], rows: list[list], floatfmt: str = "{:.4f}") -> list[str]:
    def fmt(v):
        if isinstance(v, (float, np.floating)):
            return "nan" if not np.isfinite(v) else floatfmt.format(v)
        return str(v)

    cells = [header] + [[fmt(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def matrix_lines(title: str, names: list[str], M: np.ndarray) -> list[str]:
    short = [n[:10] for n in names]
    rows = [[short[i], *[float(v) for v in M[i]]] for i in range(len(names))]
    return [title, *table(["", *short], rows, floatfmt="{:+.2f}")]


# ---------------------------------------------------------------- commands


def cmd_methods(args) -> None:
    from .plugins import list_methods

    specs = list_methods()
    payload = {
        "methods": [
            {
                "name": s.name,
                "plugin": s.plugin,
                "citation": s.citation,
                "description": s.description,
                "parts": dict(s.parts),
                "param_grid": dict(s.param_grid),
            }
            for s in specs
        ]
    }
    lines = table(["method", "plugin", "citation"], [[s.name, s.plugin, s.citation] for s in specs])
    emit(args, payload, lines)


def cmd_describe(args) -> None:
    from .datasets import describe

    ds = load_data(args.data, args.data_home, args.seed)
    stats = describe(ds)
    emit(args, {"data": args.data, **stats}, [f"{args.data}"] + [f"  {k:<14} {v}" for k, v in stats.items()])


def make_estimator(method: str, params: list[str]):
    from .plugins import make_method

    return make_method(method, **dict(parse_param(p) for p in params))


def cmd_fit(args) -> None:
    from .persistence import save_model

    ds = load_data(args.data, args.data_home, args.seed)
    est = make_estimator(args.method, args.param).fit(ds.X, ds.Y)
    save_model(est, args.out, method=args.method)
    cert = getattr(est, "certificate_", None)
    payload = {"method": args.method, "data": args.data, "model": str(args.out)}
    if cert is not None:
        payload["certificate"] = summarize_certificates(cert)
    emit(args, payload, [f"fitted {args.method} on {args.data}; model written to {args.out}"])


def summarize_certificates(cert) -> dict:
    certs = cert if isinstance(cert, (list, tuple)) else [cert]
    last = certs[-1]
    return {"converged": bool(all(c.converged for c in certs)), "gap": last.gap, "n_solves": len(certs)}


def cmd_predict(args) -> None:
    from .metrics import evaluate
    from .persistence import load_model

    est = load_model(args.model)
    ds = load_data(args.data, args.data_home, args.seed)
    scores = est.decision_function(ds.X)
    pred = est.predict(ds.X)
    if args.out:
        np.savetxt(args.out, pred, fmt="%d", delimiter=",", header=",".join(ds.label_names), comments="")
    metrics = evaluate(ds.Y, scores, pred)
    payload = {"model": str(args.model), "data": args.data, "n_samples": int(pred.shape[0]), "metrics": metrics}
    if args.out:
        payload["predictions"] = str(args.out)
    lines = [f"predicted {pred.shape[0]} rows of {args.data}" + (f" -> {args.out}" if args.out else "")]
    lines += table(["metric", "value"], [[k, v] for k, v in metrics.items()])
    emit(args, payload, lines)


def cmd_evaluate(args) -> None:
    from .model_selection import cross_validate

    ds = load_data(args.data, args.data_home, args.seed)
    est = make_estimator(args.method, args.param)
    result = cross_validate(
        est, ds.X, ds.Y, cv=args.cv, random_state=args.seed, n_jobs=args.n_jobs, progress=show_progress(args)
    )
    payload = {"method": args.method, "data": args.data, "cv": args.cv, "params": dict(map(parse_param, args.param))}
    payload.update(result)
    names = list(result["mean"])
    lines = [f"{args.method} on {args.data}, {args.cv}-fold iterative-stratified CV"]
    lines += table(["metric", "mean", "std"], [[k, result["mean"][k], result["std"][k]] for k in names])
    emit(args, payload, lines)


def cmd_demo(args) -> None:
    from .datasets import make_correlated_multilabel
    from .metrics import evaluate
    from .model_selection import train_test_split_stratified
    from .plugins import list_methods
    from .relations import correlation_from_covariance, psd_sqrt

    ds, covariance = make_correlated_multilabel(random_state=args.seed, return_covariance=True)
    X_train, X_test, Y_train, Y_test = train_test_split_stratified(ds.X, ds.Y, test_size=0.3, random_state=args.seed)
    rows, relations, weight_relations, failures = [], {}, {}, {}
    for spec in list_methods():
        try:
            est = spec.estimator().fit(X_train, Y_train)
            m = evaluate(Y_test, est.decision_function(X_test), est.predict(X_test))
        except Exception as exc:  # one failing plugin must not hide the others' results
            failures[spec.name] = f"{type(exc).__name__}: {exc}"
            continue
        rows.append((spec.name, m))
        if getattr(est, "label_correlation_", None) is not None:
            relations[spec.name] = est.label_correlation_
        elif getattr(est, "coef_", None) is not None:
            weight_relations[spec.name] = correlation_from_covariance(psd_sqrt(est.coef_.T @ est.coef_))
    truth = correlation_from_covariance(covariance)
    empirical = np.corrcoef(ds.Y, rowvar=False)
    metric_names = ["average_precision", "ranking_loss", "one_error", "coverage", "hamming_loss", "macro_f1"]
    lines = [
        f"demo: synthetic correlated data, {ds.X.shape[0]} rows x {ds.X.shape[1]} features, "
        f"{ds.Y.shape[1]} labels; 70/30 stratified split (seed {args.seed})",
        "",
        *table(["method", *metric_names], [[n, *[m[k] for k in metric_names]] for n, m in rows]),
        "",
        *matrix_lines("label correlation of the generating covariance:", ds.label_names, truth),
        "",
        *matrix_lines("empirical correlation of the label columns of Y:", ds.label_names, empirical),
    ]
    for name, corr in relations.items():
        lines += ["", *matrix_lines(f"label correlation learned by {name}:", ds.label_names, corr)]
    for name, corr in weight_relations.items():
        title = f"{name} learns no relation; correlation of its weights, (W^T W)^(1/2) as in MLRL's Omega step:"
        lines += ["", *matrix_lines(title, ds.label_names, corr)]
    for name, why in failures.items():
        lines += [f"{name} failed: {why}"]
    payload = {
        "data": {"n_samples": ds.X.shape[0], "n_features": ds.X.shape[1], "n_labels": ds.Y.shape[1]},
        "metrics": {n: m for n, m in rows},
        "true_label_correlation": truth,
        "empirical_label_correlation": empirical,
        "learned_label_correlation": relations,
        "weight_label_correlation": weight_relations,
        "failures": failures,
    }
    emit(args, payload, lines)
    if failures:
        raise CLIError(f"{len(failures)} method(s) failed: {', '.join(failures)}")


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object")
    common.add_argument("--compact", action="store_true", help="with --json: one line")
    common.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_argument("--seed", type=int, default=0, help="random seed (splits, synthetic data)")
    common.add_argument("--data-home", default=None, help="folder searched first for dataset names")

    parser = argparse.ArgumentParser(prog="mlcore", description="Max-margin multi-label learning.")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("methods", parents=[common], help="list registered methods").set_defaults(func=cmd_methods)

    p = sub.add_parser("describe", parents=[common], help="dataset statistics (MLRL Table I)")
    p.add_argument("data")
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("fit", parents=[common], help="fit a method and save the model")
    p.add_argument("method")
    p.add_argument("data")
    p.add_argument("--out", required=True, help="model file to write")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("predict", parents=[common], help="predict with a saved model")
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--out", default=None, help="CSV file for the 0/1 predictions")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("evaluate", parents=[common], help="cross-validated metrics")
    p.add_argument("method")
    p.add_argument("data")
    p.add_argument("--cv", type=int, default=10, help="number of folds (default 10)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--n-jobs", type=int, default=None)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("demo", parents=[common], help="the main job on the embedded synthetic data")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (CLIError, ValueError, OSError, CapabilityError) as exc:
        print(f"mlcore: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("mlcore: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``mlcore`` command line.

Subcommands::

    mlcore methods                      registered methods and their papers
    mlcore datasets                     the datasets known by name, and where each is found
    mlcore describe DATA                MLRL Table I statistics of a dataset
    mlcore fit METHOD DATA --out MODEL  fit and save a model
    mlcore predict MODEL DATA           predict, and score against DATA's labels
    mlcore evaluate METHOD DATA --cv K  cross-validated metrics (iterative stratification)
    mlcore compare METHOD... --data DATA... --protocol P --out DIR
                                        every method on every dataset under a paper's protocol,
                                        resumable results in DIR and a report (docs/experiments.md)
    mlcore demo                         the main job: a small compare of every method on the
                                        embedded synthetic data, with the label relations learned
    mlcore convert IN OUT               a dataset from one file format to another

DATA is a file (Mulan ARFF + XML, MEKA ARFF, LibSVM, CSV, .npz) or a dataset name looked up in
``--data-home``, then ``$MULTILABEL_CORE_DATA``, then the download cache; the name
``synthetic`` is the embedded correlated dataset.  ``--sparse auto|true|false`` chooses
whether a file's features are held CSR or dense (``load_dataset``'s ``sparse``; auto: CSR
for a sparse file unless more than 30% of its entries are stored).  ``--labels`` (positions, ranges
and names: ``0-5``, ``y1,y2``) or ``--label-prefix`` chooses a CSV file's label columns (default:
the columns named ``label:NAME``).  ``--json`` prints one JSON object.
Bad input ends with one line on stderr and exit status 2, never a traceback; a mistyped name (a
method, a ``--param``/``--grid`` parameter, a dataset, a threshold, a metric, a protocol) gets the
closest known one, case ignored.  Features are fitted as given unless ``--preprocess`` names a
scaling, as in the Python API; features whose scales lie far apart get a warning.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import shutil
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import attrs
import numpy as np
import scipy.sparse as sp

from .base.solver import CapabilityError
from .experiments.config import Experiment
from .experiments.preprocessing import PREPROCESSORS
from .metrics import METRICS

EXIT_USAGE = 2
EXIT_FAILED_FITS = 1

#: The commands that fit (fit, evaluate, compare) refuse data whose dense working set is out of all
#: proportion to what the data store (:func:`check_width`): (n + d) x L dense values -- the (n, L)
#: scores and signs every method holds, and the (d, L) weights of a linear model -- beyond
#: WORK_FLOOR values and beyond WORK_PER_STORED values per stored one.  A LibSVM file declares its
#: width by its largest index alone: ``0 16777216:1`` is 16,777,216 features in 13 bytes.
WORK_FLOOR = 2**20
WORK_PER_STORED = 256
WORK_PER_STORED_ENV = "MULTILABEL_CORE_WORK_PER_STORED"


class CLIError(Exception):
    """An error reported to the user as one line."""

    exit_status = EXIT_USAGE


class FailedFitsError(CLIError):
    """``compare --strict``: the run finished, and some fit raised (results and report are written)."""

    exit_status = EXIT_FAILED_FITS


# ---------------------------------------------------------------- helpers


def parse_param(text: str, option: str = "--param") -> tuple[str, object]:
    """``NAME=VALUE`` -> (name, value); VALUE is a Python/JSON literal or else a string."""
    from .experiments.config import parse_value

    name, sep, raw = text.partition("=")
    if not sep or not name.isidentifier():
        raise CLIError(f"{option} expects NAME=VALUE, got {text!r}")
    return name, parse_value(raw)


def load_data(data: str, data_home: str | None, random_state: int, sparse="auto", labels=None, label_prefix=None):
    from .experiments.config import SYNTHETIC, load_data

    if labels is None and label_prefix is None:
        return load_data(data, data_home, random_state, sparse)
    if data == SYNTHETIC:
        raise CLIError(f"--labels and --label-prefix choose a CSV file's label columns; {SYNTHETIC!r} is not a file")
    from .datasets import load_dataset

    return load_dataset(data, data_home=data_home, sparse=sparse, labels=labels, label_prefix=label_prefix)


def add_label_options(parser: argparse.ArgumentParser) -> None:
    """``--labels`` and ``--label-prefix``: a CSV file's label columns (read_csv's ``labels`` and ``label_prefix``)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--labels", default=None, metavar="COLUMNS",
        help="a CSV file's label columns: 0-based positions, inclusive ranges and header names, comma-separated "
        "(0-5; 10- for column 10 to the last; y1,y2); default: the columns named label:NAME",
    )
    group.add_argument(
        "--label-prefix", default=None, metavar="PREFIX",
        help="a CSV file's label columns are those whose name starts with PREFIX (cut from the label names)",
    )


def cmd_convert(args) -> None:
    """``mlcore convert IN OUT``: read IN as any command does, write it in the format OUT's suffix names."""
    from .datasets.loading import format_of, write_file

    target = Path(args.output)
    kind = format_of(target)
    if kind is None:
        raise CLIError(
            f"{target}: unknown output format; name it .arff, .svm, .libsvm, .txt, .csv (each optionally .gz) or .npz"
        )
    xml = target.with_name(_mulan_stem(target) + (".xml.gz" if target.name.endswith(".gz") else ".xml"))
    written = [target] + ([xml] if kind == "arff" and args.arff == "mulan" else [])
    if kind == "arff" and args.arff == "meka" and (xml.exists() or xml.with_name(xml.name.removesuffix(".gz")).exists()):
        raise CLIError(f"{xml.name.removesuffix('.gz')} lies beside {target}: the MEKA file would be read back as "
                       "Mulan with it; remove it or write elsewhere")
    source = Path(args.input)
    for path in written:
        if source.exists() and path.exists() and path.resolve() == source.resolve():
            raise CLIError(f"{path} is the file being converted; write to another file")
        if path.exists() and not args.force:
            raise CLIError(f"{path} exists; pass --force to overwrite it")
    ds = load_data(args.input, args.data_home, args.seed, args.sparse, **data_options(args))
    fmt = write_file(ds, target, arff=args.arff)
    shape = {"n_samples": ds.n_samples, "n_features": ds.n_features, "n_labels": ds.n_labels}
    payload = {"input": args.input, "output": [str(path) for path in written], "format": fmt, **shape}
    emit(args, payload, [
        f"converted {args.input} ({ds.n_samples} rows, {ds.n_features} features, {ds.n_labels} labels) to "
        f"{' and '.join(map(str, written))} ({fmt})"
    ])


def _mulan_stem(path: Path) -> str:
    """``yeast.arff.gz`` -> ``yeast``: the name of the XML label file written beside a Mulan ARFF file."""
    name = path.name.removesuffix(".gz")
    return name[: -len(".arff")] if name.lower().endswith(".arff") else name


def data_options(args) -> dict:
    """The label options of a command's parsed arguments, for :func:`load_data`."""
    return {"labels": getattr(args, "labels", None), "label_prefix": getattr(args, "label_prefix", None)}


def compare_data(args):
    """``--data`` for ``compare``: with ``--labels``/``--label-prefix``, each CSV file loaded with them (the
    experiment takes Dataset records beside names), the other entries as given."""
    options = data_options(args)
    if options["labels"] is None and options["label_prefix"] is None:
        return args.data
    from .datasets.loading import format_of

    entries = list(args.data or [])
    # A join A.csv+B.csv is loaded with the options too (each part is CSV); load_dataset keeps its parts.
    is_csv = [isinstance(entry, str) and all(format_of(Path(part)) == "csv" for part in entry.split("+"))
              for entry in entries]
    if not any(is_csv):
        raise CLIError("--labels and --label-prefix choose the label columns of CSV files; give them with --data FILE.csv")
    return [load_data(entry, args.data_home, 0, "auto" if args.sparse is None else args.sparse, **options) if csv
            else entry for entry, csv in zip(entries, is_csv)]


def work_per_stored() -> float:
    """The ratio :func:`check_width` allows: ``$MULTILABEL_CORE_WORK_PER_STORED`` when set, else WORK_PER_STORED."""
    text = os.environ.get(WORK_PER_STORED_ENV)
    if text is None:
        return float(WORK_PER_STORED)
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:  # NaN fails too
        raise CLIError(f"${WORK_PER_STORED_ENV} must be a positive number (or inf), got {text!r}")
    return value


def check_width(ds, data: str) -> None:
    """CLIError when fitting ``ds`` would hold far more dense values than it stores (a declared width).

    The work is ``(n + d) x L`` values; the stored values are X's stored entries (all n x d of
    a dense X), Y's relevant labels and one per row.  Refused when the work exceeds both
    :data:`WORK_FLOOR` and :data:`WORK_PER_STORED` (``$MULTILABEL_CORE_WORK_PER_STORED``) times
    the stored values.  Costs O(stored entries) for a sparse X; nothing is densified.
    """
    X, Y = ds.X, ds.Y
    (n, d), n_labels = X.shape, Y.shape[1]
    work = (n + d) * n_labels
    if work <= WORK_FLOOR:
        return
    sparse = sp.issparse(X)
    stored = (X.nnz if sparse else n * d) + int(np.count_nonzero(Y)) + n
    ratio = work_per_stored()
    if work <= ratio * stored:
        return
    from .datasets.storage import size_text

    held_features = np.unique(X.indices).size if sparse else int(np.count_nonzero(np.any(X != 0, axis=0)))
    held_labels = np.unique(np.nonzero(Y)[1]).size
    raise CLIError(
        f"{data}: {n} row(s) x {d} feature(s) and {n_labels} label(s) store {stored} value(s) ({d - held_features} "
        f"feature column(s) and {n_labels - held_labels} label column(s) are empty), but a fit holds (n + d) x L = "
        f"{work} dense values ({size_text(8 * work)} as float64): more than {ratio:g} per stored value; drop the "
        f"empty columns, or set ${WORK_PER_STORED_ENV} to allow more"
    )


@attrs.frozen
class WidthCheckedExperiment(Experiment):
    """An :class:`~.experiments.config.Experiment` whose datasets pass :func:`check_width` as they are loaded.

    ``compare`` runs it: the runner loads the data once, and a declared width is refused there,
    before any split or fit.
    """

    def load_datasets(self) -> dict:
        loaded = super().load_datasets()
        for name, dataset in loaded.items():
            check_width(dataset, name)
            scale_warning(dataset.X, name, self.preprocess)
        return loaded

    @classmethod
    def of(cls, experiment: Experiment) -> WidthCheckedExperiment:
        return cls(**{a.alias: getattr(experiment, a.name) for a in attrs.fields(type(experiment)) if a.init})


def parse_sparse(text: str):
    """``--sparse``: auto, true or false -> "auto", True, False."""
    choices = {"auto": "auto", "true": True, "false": False}
    if text.lower() not in choices:
        raise argparse.ArgumentTypeError(f"expected auto, true or false, got {text!r}")
    return choices[text.lower()]


def add_sparse_option(parser: argparse.ArgumentParser, default) -> None:
    from .datasets import DENSE_ABOVE

    parser.add_argument(
        "--sparse", type=parse_sparse, default=default, metavar="auto|true|false",
        help="features as CSR (true), dense (false), or auto: CSR for a sparse file unless more than "
        f"{DENSE_ABOVE:.0%}% of its "  # argparse formats help with %: the sign doubled
        "entries are stored; default " + ("auto" if default == "auto" else "the experiment file's, else auto"),
    )


def show_progress(args):
    """A bar for a person watching (stderr a terminal), else a line every ten seconds on stderr (a
    redirected run is not silent); nothing with --quiet.  --json keeps the bar off (the lines go to
    stderr, the JSON to stdout)."""
    if args.quiet:
        return False
    if sys.stderr.isatty():
        return not args.json
    return "lines"


def emit(args, payload: dict, lines: list[str]) -> None:
    from .experiments.store import jsonable

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
    emit(args, payload, method_lines(specs, shutil.get_terminal_size().columns))


def method_lines(specs, width: int) -> list[str]:
    """Each method: its name, plugin, parts and description, then its citation wrapped to ``width``."""
    width = max(width, 60)
    lines = []
    for spec in specs:
        parts = ", ".join(f"{role}={name}" for role, name in spec.parts.items())
        lines.append(f"{spec.name}  [plugin {spec.plugin}]")
        for label, text in (("", spec.description), ("parts: ", parts), ("cites: ", spec.citation)):
            if text:
                lines += textwrap.wrap(label + " ".join(text.split()), width, initial_indent="    ",
                                       subsequent_indent="    " + " " * len(label))
    return lines


def cmd_describe(args) -> None:
    from .datasets import describe
    from .datasets.storage import density

    ds = load_data(args.data, args.data_home, args.seed, args.sparse, **data_options(args))
    stats = describe(ds)
    stats["storage"] = "csr" if ds.is_sparse else "dense"
    stats["density"] = density(ds.X)
    width = max(map(len, stats))
    # Four significant digits for people (the JSON keeps every digit); '#' keeps 1.000 from reading as an exact 1.
    shown = {k: f"{v:#.4g}" if isinstance(v, (float, np.floating)) else v for k, v in stats.items()}
    emit(args, {"data": args.data, **stats}, [f"{args.data}"] + [f"  {k:<{width}} {v}" for k, v in shown.items()])


def cmd_datasets(args) -> None:
    from .datasets import known_datasets

    records = known_datasets(args.data_home, verify=args.verify)
    rows = []
    for r in records:
        split = "+".join(r["splits"].values()) if r["splits"] else (f"part of {r['split_of']}" if r["split_of"] else "")
        rows.append([
            r["name"], r["n_samples"], r["n_features"], r["n_labels"],
            "" if r["label_cardinality"] is None else f"{r['label_cardinality']:.3f}",
            "" if r["sparse"] is None else ("sparse" if r["sparse"] else "dense"),
            split, r["location"], "yes" if r["cached"] else "no",
        ])
    at_hand = sum(r["location"] != "not downloaded" for r in records)
    lines = table(["name", "n", "d", "L", "LCard", "rows", "standard split", "found in", "cached"], rows)
    lines.append(
        f"{len(records)} registered, {at_hand} found by name here; load_dataset(NAME) reads the first folder that "
        "holds it, fetch_dataset(NAME) downloads the rest into the cache"
        + ("" if args.verify else " (cached: files present; --verify checks their SHA-256)")
    )
    emit(args, {"datasets": records}, lines)


def make_estimator(method: str, params: list[str], preprocess: str | None = None, threshold: str | None = None):
    from .plugins import make_method

    values = dict(parse_param(p) for p in params)
    if threshold is not None:
        if "thresholding" in values:
            raise CLIError("give the threshold once: --threshold NAME or --param thresholding=NAME, not both")
        values["thresholding"] = threshold
    return make_method(method, preprocess=preprocess, **values)


def parse_threshold(text: str) -> str:
    """``--threshold``: a registered threshold name (the methods' ``thresholding``)."""
    from .plugins import list_components

    from .plugins import did_you_mean

    known = sorted(spec.name for spec in list_components("threshold"))
    if text not in known:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(known)}, got {text!r}.{did_you_mean(text, known)}")
    return text


def add_threshold_option(parser: argparse.ArgumentParser, where: str) -> None:
    parser.add_argument(
        "--threshold", type=parse_threshold, default=None, metavar="NAME",
        help=f"how scores become labels, {where}: a registered threshold (zero, tuned_f1, tuned_micro_f1, "
        "tuned_macro_f1, rank_cut, proportional_cut, learned_linear; fitted on the training rows only); "
        "default: the method's own (zero; learned_linear for the ranking family)",
    )


def with_threshold(experiment, threshold: str | None):
    """``experiment`` with ``thresholding=[threshold]`` added to every method's grid (``--threshold`` of compare)."""
    import attrs

    if threshold is None:
        return experiment
    grids = {}
    for method in experiment.methods:
        grid = experiment.grid(method)
        if "thresholding" in grid:
            raise CLIError(f"give the threshold once: --threshold or a thresholding grid ({method!r} has one)")
        grids[method] = {**grid, "thresholding": [threshold]}
    return attrs.evolve(experiment, grids=grids)


def threshold_text(est) -> str | None:
    """The fitted threshold of a model, as reports show it (None for a model without one)."""
    threshold = getattr(est, "threshold_", None)
    return None if threshold is None else threshold.describe()


def parse_preprocess(text: str) -> str | None:
    """``--preprocess``: a scaler name, or ``none`` for X as given (None)."""
    if text.lower() == "none":
        return None
    if text not in PREPROCESSORS:
        from .plugins import did_you_mean

        raise argparse.ArgumentTypeError(
            f"expected none or one of {', '.join(sorted(PREPROCESSORS))}, got {text!r}."
            + did_you_mean(text, [*PREPROCESSORS, "none"])
        )
    return text


class _FromFile:
    """compare's ``--preprocess`` when not given (not a str: argparse would parse a str default)."""

    def __repr__(self):
        return "the experiment file's setting, else none"


#: compare's ``--preprocess`` when not given: the experiment file's setting, else none.
PREPROCESS_FROM_FILE = _FromFile()


def add_preprocess_option(parser: argparse.ArgumentParser, where: str, default=None) -> None:
    """``--preprocess`` with the one default of every entry point: none, X as given (docs: "One scaling rule")."""
    parser.add_argument(
        "--preprocess", type=parse_preprocess, default=default, metavar="{" + ",".join(sorted(PREPROCESSORS)) + ",none}",
        help=f"feature scaling fitted on {where}: standardize (sparse X without centring), maxabs or l2_rows; "
        "default " + ("the experiment file's, else " if default is not None else "")
        + "none: X as given, as in the Python API (a warning names features whose scales lie far apart)",
    )


def scaling_line(preprocess: str | None, where: str) -> str:
    if preprocess is None:
        return "features: as given (no scaling; --preprocess standardize scales them)"
    return f"features: {preprocess}, fitted on {where}"


def scale_warning(X, data: str, preprocess: str | None) -> str | None:
    """For X fitted as given: a :class:`~.preprocessed.FeatureScaleWarning` line when its scales lie far apart.

    The line is returned for the command's output and warned (counted on stderr with the other warnings).
    """
    from .preprocessed import FeatureScaleWarning, badly_scaled

    if preprocess is not None:
        return None
    sentence = badly_scaled(X)
    if sentence is None:
        return None
    text = f"{data}: {sentence}"
    warnings.warn(text, FeatureScaleWarning, stacklevel=2)
    return f"warning: {text}"


def cmd_fit(args) -> None:
    from .persistence import save_model

    ds = load_data(args.data, args.data_home, args.seed, args.sparse, **data_options(args))
    check_width(ds, args.data)
    est = make_estimator(args.method, args.param, args.preprocess, args.threshold)
    scaling = scale_warning(ds.X, args.data, args.preprocess)
    est.fit(ds.X, ds.Y)
    # The training data's name goes into the model file: predict warns when it scores these rows again.
    save_model(est, args.out, method=args.method, data=getattr(ds, "name", None))
    cert = getattr(est, "certificate_", None)
    (n, d), n_labels = ds.X.shape, ds.Y.shape[1]
    payload = {"method": args.method, "data": args.data, "n_samples": n, "n_features": d, "n_labels": n_labels,
               "model": str(args.out), "preprocess": args.preprocess, "threshold": threshold_text(est)}  # fmt: skip
    if cert is not None:
        payload["certificate"] = summarize_certificates(cert)
    lines = [
        f"fitted {args.method} on {args.data}: {n} rows x {d} features, {n_labels} labels; model written to {args.out}",
        scaling_line(args.preprocess, "the training rows and saved with the model (predict applies it)"),
        *([scaling] if scaling else []),
        f"threshold: {threshold_text(est)} (fitted on the training rows, saved with the model)",
    ]
    if cert is not None:
        summary = payload["certificate"]
        state = "converged" if summary["converged"] else "NOT converged"
        gap = summary["gap"]
        gap_text = f"{gap:.3g}" if isinstance(gap, (int, float)) else str(gap)
        lines.append(f"certificate: {state} ({summary['n_solves']} solve(s), last duality gap {gap_text})")
    emit(args, payload, lines)


def summarize_certificates(cert) -> dict:
    certs = cert if isinstance(cert, (list, tuple)) else [cert]
    last = certs[-1]
    return {"converged": bool(all(c.converged for c in certs)), "gap": last.gap, "n_solves": len(certs)}


def model_preprocess(est) -> str | None:
    """The scaling a loaded model applies to new rows (None: none)."""
    from .preprocessed import Preprocessed

    return est.preprocess if isinstance(est, Preprocessed) else None


def write_predictions(path, ds, scores, pred, with_scores: bool) -> None:
    """CSV: a row id (the row's position in DATA, from 0), the 0/1 prediction of every label and, with
    ``with_scores``, every label's score (``score:LABEL``, the decision function: relevant when > 0)."""
    import csv

    names = list(ds.label_names)
    header = ["row"] + names + ([f"score:{name}" for name in names] if with_scores else [])
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for i in range(pred.shape[0]):
            row = [i] + [int(v) for v in pred[i]]
            if with_scores:
                row += [repr(float(v)) for v in scores[i]]
            writer.writerow(row)


def check_model_width(est, ds, model, data: str) -> None:
    """CLIError, before any prediction, when DATA's feature or label columns are not the model's."""
    for what, have, fitted in (
        ("feature", ds.X.shape[1], getattr(est, "n_features_in_", None)),
        ("label", ds.Y.shape[1], getattr(est, "n_labels_", None)),
    ):
        if fitted is not None and have != fitted:
            raise CLIError(f"{data} has {have} {what} column(s), but the model {model} was fitted on {fitted}")


def check_model_file_width(model, ds, data: str) -> None:
    """CLIError when DATA of a declared width does not have the columns the model file was fitted on.

    Read from the payload's schema (the root estimator's ``n_features_in_`` and ``n_labels_``)
    before anything is rebuilt: rebuilding imports skops, which imports every scikit-learn module
    (about 40 MB), and on a declared width that is the difference between a refusal under 200 MB
    and one above it.  Only for data :func:`check_width` would not fit (on other data the early
    read would inflate the payload twice for nothing); a file this cannot read is left to
    :func:`~multilabel_core.persistence.load_model`, which says what is wrong with it, and
    :func:`check_model_width` checks the rebuilt model in every case.
    """
    try:
        check_width(ds, data)
        return
    except CLIError:
        pass
    from .persistence import check_payload, payload_cap, ratio_cap, read_archive, release_buffer

    path = os.fspath(model)
    try:
        cap, ratio = payload_cap(None), ratio_cap(None)
        _, payload = read_archive(path, os.path.getsize(path), cap, ratio)
        try:
            schema = check_payload(path, payload, cap, ratio)
        finally:
            release_buffer(payload)
    except (OSError, ValueError):
        return
    for what, have, name in (("feature", ds.X.shape[1], "n_features_in_"), ("label", ds.Y.shape[1], "n_labels_")):
        fitted = _schema_int(schema, name)
        if fitted is not None and have != fitted:
            raise CLIError(f"{data} has {have} {what} column(s), but the model {model} was fitted on {fitted}")


def _schema_int(schema, name: str) -> int | None:
    """The integer attribute ``name`` of a skops schema's root object, or None when it holds none."""
    state = schema.get("content") if isinstance(schema, dict) else None
    state = state.get("content") if isinstance(state, dict) else None
    node = state.get(name) if isinstance(state, dict) else None
    if not (isinstance(node, dict) and node.get("is_json") and isinstance(node.get("content"), str)):
        return None
    try:
        value = json.loads(node["content"])
    except ValueError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def training_rows_warning(model, name: str) -> str | None:
    """When the data scored is (or holds) the data the model was fitted on: a warning, issued and returned.

    The training data's name is the model file's ``data`` (:func:`~.persistence.model_manifest`;
    absent in files written before it, and in pickles: nothing to compare then).  A whole dataset
    whose registered standard split has the training data as a part (``scene`` for a model of
    ``scene-train``) holds those rows too.
    """
    from .persistence import model_manifest
    from .plugins import list_datasets

    try:
        fitted_on = model_manifest(model)["data"]
    except ValueError:
        return None
    if fitted_on is None:
        return None
    parts = {spec.name: set(spec.splits.values()) for spec in list_datasets()}
    if name == fitted_on:
        what = f"{name} is the data the model {model} was fitted on"
    elif fitted_on in parts.get(name, ()):
        what = f"{name} holds the rows of {fitted_on}, the data the model {model} was fitted on"
    else:
        return None
    text = (f"{what}: these metrics score training rows, not held-out ones (score a test set, e.g. "
            f"{_test_part(fitted_on)})")
    warnings.warn(text, UserWarning, stacklevel=2)
    return text


def _test_part(name: str) -> str:
    """The registered test part beside training part ``name`` (scene-test for scene-train), else a generic hint."""
    from .plugins import list_datasets

    for spec in list_datasets():
        if spec.splits.get("train") == name and "test" in spec.splits:
            return spec.splits["test"]
    return "rows held out of the fit"


def cmd_predict(args) -> None:
    from .metrics import evaluate
    from .persistence import load_model

    if args.scores and not args.out:
        raise CLIError("--scores adds the scores to the --out file: give --out FILE too")
    ds = load_data(args.data, args.data_home, args.seed, args.sparse, **data_options(args))
    check_model_file_width(args.model, ds, args.data)
    est = load_model(args.model, trusted=args.trust)
    check_model_width(est, ds, args.model, args.data)
    seen = training_rows_warning(args.model, ds.name)
    scores = est.decision_function(ds.X)
    pred = est.predict(ds.X)
    if args.out:
        write_predictions(args.out, ds, scores, pred, args.scores)
    metrics = evaluate(ds.Y, scores, pred)
    preprocess = model_preprocess(est)
    payload = {
        "model": str(args.model), "data": args.data, "n_samples": int(pred.shape[0]), "preprocess": preprocess,
        "metrics": metrics,
    }
    if args.out:
        payload["predictions"] = str(args.out)
    if seen is not None:
        payload["warning"] = seen
    lines = [f"predicted {pred.shape[0]} rows of {args.data}" + (f" -> {args.out}" if args.out else "")]
    lines.append(scaling_line(preprocess, "the model's training rows (saved with it)"))
    if seen is not None:
        lines.append(f"warning: {seen}")
    lines += table(["metric", "value"], [[k, v] for k, v in metrics.items()])
    emit(args, payload, lines)


def cmd_evaluate(args) -> None:
    from .model_selection import cross_validate

    ds = load_data(args.data, args.data_home, args.seed, args.sparse, **data_options(args))
    check_width(ds, args.data)
    est = make_estimator(args.method, args.param, args.preprocess, args.threshold)
    scaling = scale_warning(ds.X, args.data, args.preprocess)
    result = cross_validate(
        est, ds.X, ds.Y, cv=args.cv, random_state=args.seed, n_jobs=args.n_jobs, progress=show_progress(args)
    )
    payload = {
        "method": args.method, "data": args.data, "cv": args.cv, "params": dict(map(parse_param, args.param)),
        "preprocess": args.preprocess, "threshold": args.threshold,
    }
    payload.update(result)
    names = list(result["mean"])
    lines = [
        f"{args.method} on {args.data}, {args.cv}-fold iterative-stratified CV",
        scaling_line(args.preprocess, "each training fold only"),
        *([scaling] if scaling else []),
        *([f"threshold: {args.threshold}, fitted on each training fold only"] if args.threshold else []),
    ]
    lines += table(["metric", "mean", "std"], [[k, result["mean"][k], result["std"][k]] for k in names])
    emit(args, payload, lines)


SUMMARY_METRICS = ["average_precision", "ranking_loss", "one_error", "coverage", "hamming_loss", "macro_f1"]


def summary_table(records, metrics=SUMMARY_METRICS) -> list[str]:
    """Mean +- std over the splits of each (dataset, method): one row each (the value alone for one split,
    as under the ``given`` protocol: one value has no spread)."""
    from .experiments.stats import summarize

    cells = {}
    for row in summarize(records, metrics):
        cell = f"{row['mean']:.4f}" if row["n"] == 1 else f"{row['mean']:.4f} +- {row['std']:.4f}"
        cells.setdefault((row["dataset"], row["method"]), {})[row["metric"]] = cell
    rows = [[dataset, method, *[cell[m] for m in metrics]] for (dataset, method), cell in cells.items()]
    return table(["dataset", "method", *metrics], rows)


def diagnose(records) -> dict:
    """A run's failed fits (``failures``: grid points of the inner searches and whole splits), their
    ``counts``, its ``warnings`` (:func:`run_warnings`), its ``grid_edges`` and its ``constant_labels`` per dataset (:mod:`.experiments.diagnostics`),
    read once for the summary lines, the JSON and ``--strict``."""
    from .experiments.diagnostics import constant_label_counts, failure_counts, failures, grid_edge_counts
    from .experiments.report import no_label_models

    return {
        "failures": failures(records),
        "warnings": run_warnings(records),
        "counts": failure_counts(records),
        "grid_edges": grid_edge_counts(records),
        "constant_labels": constant_label_counts(records),
        "no_label_models": no_label_models(records),
    }


def constant_label_lines(diagnosis: dict) -> list[str]:
    """Which labels were constant in a training part, per dataset, and what was done (never silent)."""
    from .experiments.diagnostics import constant_labels_sentence

    rows = diagnosis["constant_labels"]
    if not rows:
        return ["labels constant in a training part: none"]
    return [f"labels constant in a training part: {constant_labels_sentence(row)}" for row in rows]


def failure_lines(diagnosis: dict) -> list[str]:
    lines = []
    for f in diagnosis["failures"]:
        if f["stage"] == "grid point":
            point = ", ".join(f"{name}={value}" for name, value in f["params"].items())
            folds = "" if f["folds"] is None else f" in inner fold(s) {', '.join(map(str, f['folds']))}"
            lines.append(f"{f['method']} on {f['dataset']}, split {f['split']}: grid point {point} failed{folds}: "
                         f"{f['error']}")
        else:
            lines.append(f"{f['method']} on {f['dataset']}, split {f['split']} failed: {f['error']}")
    for row in diagnosis.get("no_label_models", ()):
        point = ", ".join(f"{name}={value}" for name, value in row["params"].items()) or "its parameters"
        lines.append(f"{row['method']} on {row['dataset']}, split {row['split']}: the chosen model ({point}) predicts "
                     "no label on the test part (micro-F1 = macro-F1 = 0)")
    return lines


def failure_summary(diagnosis: dict) -> str:
    """The one line every compare prints: failed fits (zero included) and grid-edge choices."""
    from .experiments.diagnostics import n_grid_edges

    counts, edges = diagnosis["counts"], n_grid_edges(diagnosis["grid_edges"])
    return (
        f"failed fits: {counts['n_failed_fits']} ({counts['n_failed_inner_fits']} in the hyper-parameter searches, "
        f"at {counts['n_failed_points']} grid point(s) of {counts['n_searches_with_failures']} split(s)); "
        f"failed splits: {counts['n_failed_splits']}; "
        f"chosen values at a grid edge: {edges}; "
        f"chosen models predicting no label: {len(diagnosis.get('no_label_models', ()))}"
    )


def run_warnings(records) -> list[tuple[str, str]]:
    """``(method, "Category: message")`` for every warning the run recorded: outer fits and grid points."""
    found = []
    for record in records:
        found += [(record["method"], text) for text in record.get("warnings") or ()]
        for point in record.get("search") or ():
            found += [(record["method"], text) for text in point.get("warnings") or ()]
    return found


def warning_lines(found: list[tuple[str, str]], where: str = "") -> list[str]:
    """One line for the fits that stopped short of convergence, one for any other warnings; "none" otherwise.

    Each line counts them per method and quotes the first message, so that a run shows what
    happened without a warning printed per fit (every message is kept in the results and the report).
    """
    if not found:
        return ["warnings: none"]
    convergence = [(method, text) for method, text in found if text.startswith("ConvergenceWarning")]
    other = [(f"{text.split(':', 1)[0]} from {method}", text) for method, text in found
             if not text.startswith("ConvergenceWarning")]  # fmt: skip
    lines = []
    for kind, items in (("fit(s) stopped short of convergence", convergence), ("other warning(s)", other)):
        if items:
            counts = ", ".join(f"{key} {n}" for key, n in collections.Counter(key for key, _ in items).items())
            first = items[0][1].split(": ", 1)[-1]
            lines.append(f"{len(items)} {kind}{where} ({counts}); the first: {_shorten(first)}")
    return lines


def warning_payload(found: list[tuple[str, str]]) -> list[dict]:
    """The warnings of :func:`run_warnings` for the JSON output."""
    return [{"method": method, "warning": text} for method, text in found]


def _shorten(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def compare_payload(result, diagnosis: dict) -> dict:
    from .experiments.stats import summarize

    return {
        "out": str(result.out_dir),
        "computed": result.computed,
        "resumed": result.resumed,
        "missing": result.missing,
        "duplicates": result.duplicates,
        "summary": summarize(result.records),
        **diagnosis["counts"],
        "grid_edges": diagnosis["grid_edges"],
        "grid_extensions": result.grid_extensions,
        "n_no_label_models": len(diagnosis["no_label_models"]),
        "no_label_models": diagnosis["no_label_models"],
        "failures": diagnosis["failures"],
        "warnings": warning_payload(diagnosis["warnings"]),
        "constant_labels": diagnosis["constant_labels"],
        "report": {name: str(path) for name, path in result.report.items() if name != "plots"},
        "plots": [str(path) for path in result.report["plots"]],
    }


def check_compare_names(args, grid: dict, grids: dict) -> None:
    """CLIError with a "did you mean" for a name typed in compare's options: the --grid parameters, --select,
    --protocol (the experiment file's own names are checked when it is read)."""
    from .experiments.protocols import PROTOCOLS
    from .plugins import did_you_mean, make_method

    for option, what, value, known in (("--select", "metric", args.selection_metric, METRICS),
                                       ("--protocol", "protocol", args.protocol, PROTOCOLS)):  # fmt: skip
        if value is not None and value not in known:
            raise CLIError(f"{option}: unknown {what} {value!r}.{did_you_mean(value, known)} Known: {', '.join(known)}")
    targets = [(method, names) for method, names in grids.items()]
    targets += [(method, grid) for method in args.methods if grid]  # a grid for every method given here
    for method, names in targets:
        valid = sorted(make_method(method).get_params(deep=False))  # an unknown method: make_method's own error
        for name in names:
            if name not in valid:
                raise CLIError(
                    f"--grid: the grid of method {method!r} names unknown parameter(s) {name!r}."
                    f"{did_you_mean(name, valid)} Valid parameters: {', '.join(valid)}"
                )


def cmd_compare(args) -> None:
    from .experiments.config import load_experiment, parse_grid_option
    from .experiments.runner import run

    grid, grids = {}, {}
    for text in args.grid:
        method, name, values = parse_grid_option(text)
        (grids.setdefault(method, {}) if method else grid)[name] = values
    check_compare_names(args, grid, grids)
    given_preprocess = None if args.preprocess in (PREPROCESS_FROM_FILE, None) else args.preprocess
    experiment = load_experiment(
        args.config,
        methods=args.methods or None,
        datasets=compare_data(args),
        protocol=args.protocol,
        protocol_params=dict(parse_param(p, "--protocol-param") for p in args.protocol_param) or None,
        preprocess=given_preprocess,
        grid=grid or None,
        grids=grids or None,
        selection_metric=args.selection_metric,
        grid_extensions=args.grid_extensions,
        inner_cv=args.inner_cv,
        seed=args.seed,
        data_home=args.data_home,
        sparse=args.sparse,
        constant_labels=args.constant_labels,
        reference=args.reference,
        reference_method=args.reference_method,
        alpha=args.alpha,
    )
    if args.preprocess is None:  # --preprocess none: X as given, whatever the experiment file says
        experiment = attrs.evolve(experiment, preprocess=None)
    experiment = WidthCheckedExperiment.of(with_threshold(experiment, args.threshold))
    from .experiments.search import recording_warnings
    from .preprocessed import FeatureScaleWarning

    with recording_warnings() as caught:
        result = run(
            experiment,
            args.out,
            n_jobs=args.n_jobs,
            scheduler=args.scheduler,
            progress=show_progress(args),
            new_run=args.new_run,
            extend=args.extend,
            report_only=args.report_only,
            plots=False if args.no_plots else None,
        )
    # Caught here to be shown whole in the output (main's summary line quotes only the first, shortened);
    # warned again so that main counts them with the others.
    scaling = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, FeatureScaleWarning)))
    for w in caught:
        warnings.warn(w.message, w.category)
    params = ", ".join(f"{k}={v}" for k, v in experiment.protocol_params.items())
    diagnosis = diagnose(result.records)
    lines = [
        f"compare: {len(experiment.methods)} method(s) x {len(experiment.datasets)} dataset(s), "
        f"protocol {experiment.protocol} ({params}), seed {experiment.seed}"
        + (f", features preprocessed: {experiment.preprocess}" if experiment.preprocess else ", features as given")
        + f"; selected by {experiment.selection_metric}, grid extensions up to {result.grid_extensions} per parameter",
        f"results in {result.out_dir}: {result.computed} evaluation(s) computed, {result.resumed} resumed"
        + (f"; {result.missing} not computed yet and left out of this report (rerun without --report-only to compute "
           "them)" if result.missing else "")
        + (f"; {result.duplicates} duplicate record(s) left by two runs at once removed (the first record of each "
           "evaluation kept, the others moved to results.duplicates.jsonl)" if result.duplicates else ""),
        failure_summary(diagnosis),
        *warning_lines(diagnosis["warnings"]),
        *[f"warning: {text}" for text in scaling],
        *constant_label_lines(diagnosis),
        "",
        *summary_table(result.records),
        *failure_lines(diagnosis),
        "",
        f"report: {result.report['report']}",
    ]
    emit(args, {**compare_payload(result, diagnosis), "feature_scale_warnings": scaling}, lines)
    failed = [record for record in result.records if record["status"] == "failed"]
    if failed and len(failed) == len(result.records):
        # A run that measured nothing is not a success, --strict or not.
        first = failed[0]
        raise FailedFitsError(
            f"every evaluation failed ({len(failed)} of {len(result.records)}); the first: {first['method']} on "
            f"{first['dataset']}, split {first['split']}: {first['error']} (see {result.report['report']})"
        )
    if args.strict and diagnosis["failures"]:
        raise FailedFitsError(f"--strict: {failure_summary(diagnosis)} (see {result.report['report']})")


#: What the demo changes in a method's (reduced) registered grid.  So that every fit of the showcase
#: converges on the demo data: the low end of C where the largest value stopped short of the solvers'
#: tolerance on these 500 rows (concept_network at C = 10 and sigma = 1, leml at C = 10, prbr and prml at
#: C = 1, ovr_svc at C >= 10), and for the alternating methods the values whose joint gap their tol certifies
#: (mlrl at lam >= 1e-2, mtrl at lam2 = 1e-2 and ssmlrl at lam1 = 1e-2 stall above it: the joint bound's slack
#: where the learned covariance is nearly singular; since the kernel matrices come from one BLAS product, mlrl
#: at lam = 1e-6 stops on an objective increase of 3.5e-10 relative in one inner fold).  Measured fit by fit;
#: the demo test fails when any fit of the run does not converge.  So that no two rows repeat each other by
#: construction (:data:`COINCIDENCES`): mlfs and cmlfs select fewer than the data's 20 features (at m >= d
#: MLFS is LaRank SVM and CMLFS is CLaRank SVM); clarank's mu starts at 0.01 again (it started at 0.1 while
#: the alternation, at C = 1 and mu = 0.01, stopped after its first model step and returned D = I / L, called
#: converged at an objective of 21.66 where tol = 1e-6 reaches 21.42: a defect, now fixed -- the joint gap is
#: that of the point returned, so the fit takes the relation step and a second model step, 21.429); ovr_linear
#: is LIBLINEAR's logistic regression (its linear_svc model is br's L2-SVM).  ssmlrl searches mlrl's lambda:
#: the demo has no unlabelled rows, and without them SSMLRL is MLRL (its lam2 weights nothing), which the demo
#: says.
DEMO_SETTINGS = {
    "mlrl": {"lam": [1e-5, 1e-4, 1e-3]},
    "mtrl": {"lam1": [1e-5, 1e-3, 1e-2], "lam2": [0.0, 1e-4, 1e-3]},
    "ssmlrl": {"lam1": [1e-5, 1e-4, 1e-3], "lam2": [1e-4]},
    "clarank": {"C": [0.01, 0.1, 1.0], "mu": [0.01, 1.0]},
    "mlfs": {"n_features": [5, 15]},
    "cmlfs": {"n_features": [5, 15]},
    "ovr_linear": {"model": ["logistic"]},
    "concept_network": {"C": [0.1, 1.0]},
    "leml": {"C": [0.1, 1.0]},
    "prbr": {"C": [0.01, 0.1]},
    "prml": {"C": [0.01, 0.1]},
    "ovr_svc": {"C": [0.1, 1.0], "gamma": ["scale", 0.01]},
}

#: Rows of the demo that are equal by construction, and why; the demo names every pair whose printed metrics
#: coincide, with its reason here, or as unexpected (a defect to report) when it has none.  ``"all"``: the
#: whole row; ``"ranking"``: the ranking metrics only (the same scores, thresholded differently).
COINCIDENCES = {
    ("mlrl", "ssmlrl"): (
        "all", "without unlabelled rows (none here) SSMLRL is MLRL with lambda = lambda_1 (Zhang & Yeung, "
        "Multi-Label Relationship Learning, section 4); `--protocol semi_supervised` sets them apart",
    ),
    ("brknn_a", "brknn_b"): (
        "ranking", "one neighbour search ranks the labels for both; only the labels predicted differ "
        "(Spyromitros, Tsoumakas & Vlahavas, SETN 2008)",
    ),
    ("br", "ovr_linear"): ("all", "with model='linear_svc' ovr_linear is LIBLINEAR's L2-SVM per label, br's model"),
    ("larank", "mlfs"): (
        "all", "MLFS selecting n_features >= the data's features is LaRank SVM (Gu, Li & Han, CIKM 2011, problem 6)",
    ),
    ("clarank", "cmlfs"): (
        "all", "CMLFS selecting n_features >= the data's features is CLaRank SVM (Gu, Li & Han, CIKM 2011, problem 6)",
    ),
}

#: The demo's short table: a ranking measure and two of the predicted sets (``--full``: all six, with spread).
DEMO_METRICS = ["average_precision", "hamming_loss", "macro_f1"]

#: The ranking measures, which depend on the scores alone (:data:`COINCIDENCES`' ``"ranking"``).
RANKING_METRICS = ["average_precision", "ranking_loss", "one_error", "coverage"]


def demo_grid(grid: dict, name: str | None = None) -> dict:
    """A small grid: at most three values of each parameter (first, middle, last), with the
    demo's settings for method ``name`` (:data:`DEMO_SETTINGS`) in place of those values."""
    def small(values):
        return values if len(values) <= 3 else [values[0], values[len(values) // 2], values[-1]]

    return {**{key: small(values) for key, values in grid.items()}, **DEMO_SETTINGS.get(name, {})}


def most_chosen(records) -> dict:
    """The parameters the inner search chose most often over the splits (ties: the first split's)."""
    counts = {}
    for record in records:
        key = json.dumps(record["params"], sort_keys=True)
        counts[key] = counts.get(key, 0) + 1
    return json.loads(max(counts, key=counts.get))


def unavailable_methods(specs, X, Y) -> dict[str, str]:
    """Methods that cannot run here, with why: their fit on a few rows raises ImportError.

    A method needing an optional package (the scikit-learn baselines) names its extra in
    that error; the demo leaves it out instead of failing.  Any other error is left for
    the run itself to record.
    """
    from .plugins import make_method

    from .experiments.search import recording_warnings

    missing = {}
    for spec in specs:
        # A probe on a few rows at the defaults: whether it converges there says nothing about the run,
        # so its warnings are dropped (the run records its own).
        try:
            with recording_warnings():
                make_method(spec.name).fit(X, Y)
        except ImportError as exc:
            missing[spec.name] = str(exc)
        except Exception:  # not a missing package: the run records it
            continue
    return missing


def coinciding_rows(records, methods) -> list[tuple[str, str, str]]:
    """Pairs of methods whose printed means coincide: ``(a, b, "all")`` on all six summary metrics, else
    ``(a, b, "ranking")`` on the ranking ones (:data:`RANKING_METRICS`), in the order of ``methods``."""
    from .experiments.stats import summarize

    means = {}
    for row in summarize(records, SUMMARY_METRICS):
        means.setdefault(row["method"], {})[row["metric"]] = f"{row['mean']:.4f}"
    found = []
    for i, a in enumerate(methods):
        for b in methods[i + 1:]:
            if a not in means or b not in means:
                continue
            if means[a] == means[b]:
                found.append((a, b, "all"))
            elif all(means[a][m] == means[b][m] for m in RANKING_METRICS):
                found.append((a, b, "ranking"))
    return found


def coincidence_lines(found) -> list[str]:
    """One line per pair of :func:`coinciding_rows`: why they coincide (:data:`COINCIDENCES`), or that nothing
    explains it (a defect to report: two methods that should differ gave one result)."""
    lines = []
    for a, b, extent in found:
        what = "the same row" if extent == "all" else "the same ranking metrics"
        known = COINCIDENCES.get((a, b)) or COINCIDENCES.get((b, a))
        if known is not None and known[0] == extent:
            lines.append(f"  {a} and {b} print {what} by construction: {known[1]}")
        else:
            lines.append(f"  {a} and {b} print {what}, which nothing in their definitions explains: please report it")
    return lines


def label_groups(truth: np.ndarray) -> list[list[int]]:
    """The groups of labels the generating covariance correlates positively (connected components)."""
    groups, seen = [], set()
    for start in range(truth.shape[0]):
        if start in seen:
            continue
        group, stack = [], [start]
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                group.append(i)
                stack += [j for j in np.flatnonzero(truth[i] > 0) if j not in seen]
        groups.append(sorted(group))
    return groups


def within_across(corr: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Mean correlation of the label pairs the generating covariance correlates positively (within a group)
    and negatively (across groups): one pair of numbers where the full matrix takes a table."""
    upper = np.triu(np.ones_like(truth, dtype=bool), k=1)
    within, across = upper & (truth > 0), upper & (truth < 0)
    return _masked_mean(corr, within), _masked_mean(corr, across)


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> float:
    return float(values[mask].mean()) if mask.any() else float("nan")


def n_edge_choices(records) -> int:
    """How many chosen values could lie at a grid edge: the numeric parameters searched over at least
    MIN_EDGE_GRID values (what :func:`~.experiments.diagnostics.grid_edges` looks at), over the splits."""
    from .experiments.diagnostics import MIN_EDGE_GRID, is_number

    count = 0
    for record in records:
        search = record.get("search") or []
        if record["status"] != "ok" or not search:
            continue
        for name, chosen in (record.get("params") or {}).items():
            values = [(entry.get("params") or {}).get(name) for entry in search]
            if is_number(chosen) and all(map(is_number, values)) and len(set(values)) >= MIN_EDGE_GRID:
                count += 1
    return count


def demo_term_lines(diagnosis: dict, n_edge: int, n_splits: int) -> list[str]:
    """One line per term of the demo's summary: what it counts, and what to do when it is not zero."""
    from .experiments.diagnostics import n_grid_edges

    counts, edges = diagnosis["counts"], n_grid_edges(diagnosis["grid_edges"])
    return [
        "what the summary means:",
        f"  failed fits: {counts['n_failed_fits']}: fits that raised (inner-search ones too); each is named below "
        "with its error",
        f"  failed splits: {counts['n_failed_splits']}: test folds a method has no result on (its row averages the "
        "others)",
        f"  chosen values at a grid edge: {edges} of {n_edge}: the search chose its lowest or highest value, so the "
        "best may lie beyond; compare extends such grids (--grid-extensions), the demo's fixed grids do not",
        f"  chosen models predicting no label: {len(diagnosis.get('no_label_models', ()))}: chosen models that put "
        "no label on any test row; try --select or --threshold",
        f"  columns: means over the {n_splits} test folds; average_precision, macro_f1: higher is better, "
        "hamming_loss: lower (--full: spread, 3 more)",
        "  correlation within / across: mean over label pairs in one group / in different groups, of the relation "
        "learned, else of the weights (W^T W)^(1/2)",
        "  warnings: fits that stopped short of their tolerance, or values clipped, counted per method",
    ]


def cmd_demo(args) -> None:
    from .datasets import make_correlated_multilabel
    from .experiments.runner import run_experiment
    from .experiments.search import describe_warnings, recording_warnings
    from .plugins import list_methods, make_method
    from .relations import correlation_from_covariance, psd_sqrt

    n_splits = 3
    ds, covariance = make_correlated_multilabel(random_state=args.seed, return_covariance=True)
    unavailable = unavailable_methods(list_methods(), ds.X[:60], ds.Y[:60])
    specs = [spec for spec in list_methods() if spec.name not in unavailable]
    folder = contextlib.nullcontext(args.out) if args.out else tempfile.TemporaryDirectory(prefix="mlcore-demo-")
    with folder as out:
        result = run_experiment(
            [spec.name for spec in specs],
            [ds],
            "kfold",
            out,
            protocol_params={"n_splits": n_splits},
            grids={spec.name: demo_grid(spec.param_grid, spec.name) for spec in specs if spec.param_grid},
            # The demo's grids are chosen so that every fit converges (DEMO_SETTINGS); an extension would leave them.
            grid_extensions=0,
            inner_cv=2,
            seed=args.seed,
            n_jobs=args.n_jobs,
            progress=show_progress(args),
            plots=None if args.out else False,
        )
    by_method = {spec.name: [r for r in result.records if r["method"] == spec.name] for spec in specs}
    relations, weight_relations, chosen = {}, {}, {}
    diagnosis = diagnose(result.records)
    found = list(diagnosis["warnings"])
    for name, records in by_method.items():
        ok = [r for r in records if r["status"] == "ok"]
        if not ok:
            continue
        chosen[name] = most_chosen(ok)
        with recording_warnings() as caught:
            est = make_method(name, **chosen[name]).fit(ds.X, ds.Y)
        found += [(name, text) for text in describe_warnings(caught)]
        if getattr(est, "label_correlation_", None) is not None:
            relations[name] = est.label_correlation_
        elif getattr(est, "coef_", None) is not None:
            weight_relations[name] = correlation_from_covariance(psd_sqrt(est.coef_.T @ est.coef_))
    truth = correlation_from_covariance(covariance)
    empirical = np.corrcoef(ds.Y, rowvar=False)
    failures = failure_lines(diagnosis)
    failed_splits = [r for r in result.records if r["status"] == "failed"]
    coincide = coinciding_rows(result.records, list(by_method))
    header = [
        f"demo: synthetic correlated data, {ds.X.shape[0]} rows x {ds.X.shape[1]} features, {ds.Y.shape[1]} labels; "
        f"{n_splits}-fold iterative-stratified CV, parameters chosen by 2-fold inner CV (seed {args.seed})",
        *([f"results in {result.out_dir}"] if args.out else []),
        failure_summary(diagnosis),
    ]
    explained = [
        *demo_term_lines(diagnosis, n_edge_choices(result.records), n_splits),
        *(["rows that coincide:", *coincidence_lines(coincide)] if coincide else []),
    ]
    if args.full:
        lines = [
            *header,
            "",
            *summary_table(result.records),
            "",
            *table(["method", "parameters chosen most often"], [[n, json.dumps(p)] for n, p in chosen.items()]),
            "",
            *matrix_lines("label correlation of the generating covariance:", ds.label_names, truth),
            "",
            *matrix_lines("empirical correlation of the label columns of Y:", ds.label_names, empirical),
        ]
        for name, corr in relations.items():
            title = f"label correlation learned by {name} (fitted on all rows):"
            lines += ["", *matrix_lines(title, ds.label_names, corr)]
        for name, corr in weight_relations.items():
            title = f"{name} learns no relation; correlation of its weights, (W^T W)^(1/2) as in MLRL's Omega step:"
            lines += ["", *matrix_lines(title, ds.label_names, corr)]
        lines += ["", *explained]
    else:
        lines = [*header, "", *demo_table(result.records, chosen, relations, weight_relations, truth), ""]
        names = ds.label_names
        groups = " and ".join("{" + ", ".join(str(names[i]) for i in g) + "}" for g in label_groups(truth))
        truth_within, truth_across = within_across(truth, truth)
        y_within, y_across = within_across(empirical, truth)
        lines += [
            f"label correlation of the generating covariance: {truth_within:+.2f} within the groups {groups}, "
            f"{truth_across:+.2f} across them; of the label columns of Y: {y_within:+.2f} / {y_across:+.2f} "
            "(`mlcore demo --full`: every matrix)",
            *explained,
        ]
    lines += [f"left out, {name}: {why}" for name, why in unavailable.items()]
    lines += failures
    lines += ["", *warning_lines(found)]  # last, where a reader of the whole output ends
    payload = {
        "data": {"n_samples": ds.X.shape[0], "n_features": ds.X.shape[1], "n_labels": ds.Y.shape[1]},
        **compare_payload(result, diagnosis),
        "unavailable": unavailable,
        "warnings": warning_payload(found),
        "params": chosen,
        "coinciding_rows": [{"methods": [a, b], "extent": extent} for a, b, extent in coincide],
        "true_label_correlation": truth,
        "empirical_label_correlation": empirical,
        "learned_label_correlation": relations,
        "weight_label_correlation": weight_relations,
    }
    if not args.out:
        for key in ("out", "report", "plots"):
            payload.pop(key)
    emit(args, payload, lines)
    if failed_splits:
        first = failed_splits[0]
        raise CLIError(
            f"{len(failed_splits)} evaluation(s) failed: {first['method']} on {first['dataset']}, "
            f"split {first['split']} failed: {first['error']}"
        )


def demo_table(records, chosen: dict, relations: dict, weight_relations: dict, truth: np.ndarray) -> list[str]:
    """The demo's short table: one row per method, the means of :data:`DEMO_METRICS`, the parameters chosen
    most often and the correlation within / across the label groups of what it learned."""
    from .experiments.stats import summarize

    means = {}
    for row in summarize(records, DEMO_METRICS):
        means.setdefault(row["method"], {})[row["metric"]] = row["mean"]
    rows = []
    for method, values in means.items():
        if method in relations:
            relation = "{:+.2f} / {:+.2f} learned".format(*within_across(relations[method], truth))
        elif method in weight_relations:
            relation = "{:+.2f} / {:+.2f} weights".format(*within_across(weight_relations[method], truth))
        else:
            relation = "-"
        params = ", ".join(f"{k}={v}" for k, v in chosen.get(method, {}).items())
        rows.append([method, *[values[m] for m in DEMO_METRICS], params, relation])
    return table(["method", *DEMO_METRICS, "parameters chosen most often", "correlation within / across"], rows)


# ---------------------------------------------------------------- parser


def common_options(seed_default) -> argparse.ArgumentParser:
    """The options every subcommand takes (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object")
    common.add_argument("--compact", action="store_true", help="with --json: one line")
    common.add_argument("--quiet", action="store_true", help="no progress bar or progress lines")
    common.add_argument("--seed", type=int, default=seed_default, help="random seed (splits, synthetic data)")
    common.add_argument("--data-home", default=None, help="folder searched first for dataset names")
    return common


#: Help texts shared by the subcommands' arguments.
METHOD_HELP = "a registered method name (mlcore methods lists them)"
DATA_HELP = (
    "a dataset name (mlcore datasets lists them; synthetic: the embedded one) or a file (ARFF, LibSVM, CSV, .npz)"
)
PARAM_HELP = (
    "a hyper-parameter of the method, repeatable: NAME=VALUE with VALUE a Python literal or a string "
    "(e.g. --param C=1 --param tol=1e-6; mlcore methods shows the parts, make_method's error the names)"
)


def build_parser() -> argparse.ArgumentParser:
    common = common_options(seed_default=0)

    parser = argparse.ArgumentParser(prog="mlcore", description="Max-margin multi-label learning.")
    sub = parser.add_subparsers(dest="command", required=True)

    output = argparse.ArgumentParser(add_help=False)  # the only options that mean something for a listing
    output.add_argument("--json", action="store_true", help="print one JSON object")
    output.add_argument("--compact", action="store_true", help="with --json: one line")
    sub.add_parser("methods", parents=[output], help="list registered methods: parts, description, paper").set_defaults(
        func=cmd_methods, quiet=True
    )

    p = sub.add_parser(
        "datasets", parents=[output], help="the datasets known by name: sizes, standard splits, where each is found",
    )
    p.add_argument("--data-home", default=None, help="folder searched first (and the download cache, when given)")
    p.add_argument("--verify", action="store_true", help="check every cached file's SHA-256 (reads the files)")
    p.set_defaults(func=cmd_datasets, quiet=True)

    p = sub.add_parser("describe", parents=[common], help="dataset statistics (MLRL Table I)")
    p.add_argument("data", help=DATA_HELP)
    add_sparse_option(p, "auto")
    add_label_options(p)
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("fit", parents=[common], help="fit a method and save the model")
    p.add_argument("method", help=METHOD_HELP)
    p.add_argument("data", help="the training data: " + DATA_HELP + " (every row is fitted on)")
    p.add_argument("--out", required=True, help="model file to write (MODEL.mlcore: loads without running code)")
    add_sparse_option(p, "auto")
    add_label_options(p)
    add_preprocess_option(p, "the training rows, saved with the model and applied by predict")
    add_threshold_option(p, "saved with the model")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=PARAM_HELP)
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser(
        "predict",
        parents=[common],
        help="predict with a saved model",
        description="Predict with a model saved by `mlcore fit` (or save_model). An .mlcore file is read without "
        "running code from it: only trusted classes are rebuilt, anything else is refused.",
    )
    p.add_argument("model", help="model file (.mlcore; a pickle/joblib file only with --trust)")
    p.add_argument("data", help="the rows to predict and score against their labels: " + DATA_HELP
                   + "; not the data the model was fitted on (a warning says so)")
    p.add_argument("--out", default=None, help="CSV file: a row id and the 0/1 prediction of every label")
    p.add_argument("--scores", action="store_true", help="with --out: also every label's score (score:LABEL columns)")
    p.add_argument(
        "--trust",
        action="store_true",
        help="RISK: also load pickle/joblib model files and classes outside the trusted list; unpickling a file "
        "runs any code its author put in it, with your permissions. Use only for files from a source you trust",
    )
    add_sparse_option(p, "auto")
    add_label_options(p)
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("evaluate", parents=[common], help="cross-validated metrics")
    p.add_argument("method", help=METHOD_HELP)
    p.add_argument("data", help=DATA_HELP)
    p.add_argument("--cv", type=int, default=10, help="number of folds (default 10)")
    add_sparse_option(p, "auto")
    add_label_options(p)
    add_preprocess_option(p, "each training fold only")
    add_threshold_option(p, "fitted on each training fold")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=PARAM_HELP)
    p.add_argument("--n-jobs", type=int, default=None, metavar="N",
                   help="folds fitted at once by joblib workers (default 1; -1: one per core; the results do "
                   "not depend on it)")
    p.set_defaults(func=cmd_evaluate)

    # compare's seed defaults to the experiment file's (else 0), so "not given" must be visible.
    p = sub.add_parser(
        "compare", parents=[common_options(seed_default=None)], help="every method on every dataset under one protocol"
    )
    p.add_argument("methods", nargs="*", metavar="METHOD", help="registered method names")
    p.add_argument("--data", nargs="+", default=None, metavar="DATA", help="dataset names or files")
    add_sparse_option(p, None)
    add_label_options(p)
    p.add_argument(
        "--protocol", default=None,
        help="kfold (default), repeated_fixed_train, fixed_ratio, semi_supervised or given (the data's own split: "
        "the files of --data TRAIN+TEST, or --protocol-param n_train=N for the first N rows)",
    )
    p.add_argument("--protocol-param", action="append", default=[], metavar="NAME=VALUE", help="e.g. n_splits=5")
    add_preprocess_option(p, "each training part only", default=PREPROCESS_FROM_FILE)
    p.add_argument("--out", required=True, help="results folder (created, or resumed)")
    add_threshold_option(p, "for every method (added to each method's grid as thresholding=[NAME])")
    # Checked by Experiment rather than by argparse choices: a bad value is one line on stderr, like any bad input.
    p.add_argument("--constant-labels", default=None, metavar="{refuse,predict_constant}",
                   help="a label of one value in a training part: refuse (default; the fit fails) or predict_constant "
                   "(fit the other labels, predict it at that value)")
    p.add_argument("--grid", action="append", default=[], metavar="[METHOD.]NAME=v1,v2,...",
                   help="grid values replacing the registered grid (every method, or METHOD's)")
    p.add_argument("--config", default=None, metavar="FILE", help="experiment file (TOML, or YAML with PyYAML)")
    p.add_argument("--select", "--selection-metric", dest="selection_metric", default=None, metavar="METRIC",
                   help="the metric the inner search chooses by (default average_precision; one of "
                   + ", ".join(METRICS) + ")")
    p.add_argument("--grid-extensions", type=int, default=None, metavar="N",
                   help="extend a grid beyond the edge its choice lies at, up to N times per parameter "
                   "(default 3 for a new run; a resumed run keeps its own; 0: never)")
    p.add_argument("--inner-cv", type=int, default=None, metavar="K", help="inner folds of the search (default 3)")
    p.add_argument("--n-jobs", type=int, default=None, help="joblib workers")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="dask.distributed scheduler, tcp://host:8786")
    p.add_argument("--reference", default=None, metavar="FILE", help="the papers' numbers (CSV, JSON or TOML)")
    p.add_argument("--reference-method", default=None, metavar="NAME", help="method the others are t-tested against")
    p.add_argument("--alpha", type=float, default=None, help="level of the paired t-tests (default 0.05)")
    p.add_argument("--new-run", action="store_true", help="a changed configuration goes to a new folder DIR-<hash>")
    p.add_argument("--extend", action="store_true",
                   help="a larger protocol n_repeats adds its splits to the run in DIR and keeps its records")
    p.add_argument("--report-only", action="store_true",
                   help="compute nothing: write the report of the evaluations already in DIR (e.g. of a stopped run)")
    p.add_argument("--no-plots", action="store_true", help="no PNG figures in the report (they need the plot extra)")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 when any fit failed, inner-search fits included (results are kept)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("demo", parents=[common], help="the main job: a small compare on the embedded synthetic data")
    p.add_argument("--out", default=None, help="keep the results and report in this folder (default: a temporary one)")
    p.add_argument("--n-jobs", type=int, default=-1,
                   help="joblib workers (default -1: one per core; the results do not depend on it)")
    p.add_argument("--full", action="store_true",
                   help="print every metric with its spread, the parameters and every label-correlation matrix "
                   "(about 220 lines; the default is a summary of under 60)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "convert", parents=[common], help="a dataset from one file format to another (ARFF, LibSVM, CSV, .npz)",
        description="Read IN (a file of any format mlcore reads, or a dataset name) and write it to OUT in the "
        "format OUT's suffix names: .arff (Mulan, with NAME.xml beside it; --arff meka for one MEKA file), .svm, "
        ".libsvm or .txt (LibSVM), .csv (label columns named label:NAME), each optionally .gz, or .npz.",
    )
    p.add_argument("input", metavar="IN", help="the data to read: a file path or a dataset name")
    p.add_argument("output", metavar="OUT", help="the file to write; its suffix chooses the format")
    add_label_options(p)
    add_sparse_option(p, "auto")
    p.add_argument("--arff", choices=("mulan", "meka"), default="mulan",
                   help="the ARFF flavour of an .arff OUT: mulan (ARFF + NAME.xml, default) or meka (one file)")
    p.add_argument("--force", action="store_true", help="overwrite OUT when it exists")
    p.set_defaults(func=cmd_convert)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .experiments.search import describe_warnings, recording_warnings

    args = build_parser().parse_args(argv)
    # Warnings are gathered, not printed one per fit as Python does: a command ends with one
    # summary line per kind on stderr (compare and demo count the run's own in their output).
    with recording_warnings() as caught:
        try:
            args.func(args)
        except BrokenPipeError:  # `mlcore ... | head`: the reader left; nothing is wrong
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")
            return 0
        except (CLIError, ValueError, OSError, CapabilityError) as exc:
            print(f"mlcore: error: {exc}", file=sys.stderr)
            return getattr(exc, "exit_status", EXIT_USAGE)
        except KeyboardInterrupt:
            print("mlcore: interrupted", file=sys.stderr)
            return 130
    if caught:
        subject = getattr(args, "method", None) or args.command
        for line in warning_lines([(subject, text) for text in describe_warnings(caught)], " in this command"):
            print(f"mlcore: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

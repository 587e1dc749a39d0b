"""The hyper-parameters a reproduction run chose most often, read from its results store."""

from __future__ import annotations

import collections
import json
from pathlib import Path


def chosen_params(results, method: str, dataset: str, drop=()) -> dict:
    """The ``params`` most often chosen for ``method`` on ``dataset`` in ``results`` (a results.jsonl).

    ``drop`` names parameters left out before counting (e.g. ``n_features`` when it is varied).
    """
    counts = collections.Counter()
    with open(Path(results)) as lines:
        for line in lines:
            record = json.loads(line)
            if record["method"] == method and record["dataset"] == dataset and record["status"] == "ok":
                params = {k: v for k, v in record["params"].items() if k not in drop}
                counts[json.dumps(params, sort_keys=True)] += 1
    if not counts:
        raise ValueError(f"{results} has no finished record of {method} on {dataset}: run run.sh first")
    return json.loads(counts.most_common(1)[0][0])

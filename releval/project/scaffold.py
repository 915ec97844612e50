"""``releval init``: a project of a team's own, around its data.

The project holds what is the team's (params.yaml written from its data, its git history,
its DVC cache and remote) and what ties the outputs to the code (dvc.yaml, the code digest
``.releval/code.yaml``: ``releval.project.template``); the stages, flows and validation suites
run from the installed package. The data is read and checked before anything is written, so
a bad file leaves no half-made project. The data is a corpus, the team's runs with their
qrels and no corpus (``qrels``: ``prepare.source: runs``, the DAG without its fuse stage), an
interaction log or logged bandit feedback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import yaml

from releval.errors import InputError
from releval.params import parse_params
from releval.project import params_writer, profile, template

WRITES = ("dvc.yaml", "params.yaml", ".releval", ".dvc", ".gitignore", ".dvcignore",
          "README.md")
GIT = ["git", "-c", "user.email=releval@localhost", "-c", "user.name=releval"]
DVC_CONFIG = """[core]
    analytics = false
    remote = local
['remote "local"']
    url = ../.dvcstore
[plots]
    html_template = ../reports/plots/dvc_plots_template.html
"""
GITIGNORE = """# pipeline outputs: pinned by dvc.lock, reproduced by `releval run`
/data/
/reports/
# the default DVC remote: a local folder (`dvc remote add -d <name> <url>` for a shared one)
/.dvcstore/
"""
DVCIGNORE = "# paths DVC should not see (as .gitignore)\n"
README = """# {name}

A releval project: {what}

```bash
releval run --gate      # the pipeline; exit 1 when the release gate fails
releval gate            # the recorded decision again
releval history         # every kept run
```

`params.yaml` was written from the data by `releval init`; each choice says why, and what
was left out (rules the data cannot answer) is said in its comments. The report is
`reports/index.html`; the receipt of each run is `reports/receipt.json` (`releval reproduce
reports/receipt.json` re-runs it from its pinned inputs). Commit `params.yaml`, `dvc.yaml`,
`dvc.lock` and `.releval/` after a run you keep.
"""


def _relative(path: Path, dest: Path) -> str:
    """``path`` as params name it: relative to the project (kept portable with the data)."""
    return Path(os.path.relpath(path.resolve(), dest.resolve())).as_posix()


def _runs(runs: dict[str, Path], dest: Path) -> dict[str, profile.Run]:
    out = {}
    for name, path in runs.items():
        run = profile.of_run(name, path)
        out[name] = profile.Run(_relative(path, dest), run.system, run.seeds, run.statuses,
                                run.queries, run.depth, run.query_ids)
    return out


def _matched(runs: dict[str, Path], team: dict[str, profile.Run], known: frozenset[str],
             what: str, users: bool = False) -> None:
    """Each run answers some query of the data (``profile.unmatched``), named as given."""
    for name, run in team.items():
        profile.unmatched(replace(run, path=str(runs[name])), known, what, users)


class DataChoice(InputError):
    """A project is made from exactly one kind of data: a corpus, the team's runs with their
    qrels (no corpus), an interaction log or a log of bandit feedback."""

    def __init__(self, source: str):
        super().__init__("give the data: a corpus (a BEIR folder or a folder of tables), "
                         "qrels with two or more runs (no corpus), an interaction log (a "
                         "folder with interactions and items) or logged bandit feedback, one "
                         "of the four", source)

    def __reduce__(self):
        return type(self), (self.source,)


def _judged_runs(dest: Path, qrels: Path, queries: Path | None, runs: dict[str, Path],
                 team: dict[str, profile.Run], baseline: str | None,
                 candidate: str | None) -> str:
    """params.yaml for the team's runs judged by ``qrels``, without a corpus."""
    if len(runs) < 2:
        raise InputError(f"qrels without a corpus evaluate the team's runs against each "
                         f"other: give two or more runs (got {len(runs)})", str(qrels))
    data = profile.of_judged_runs(qrels, queries, runs)
    _matched(runs, team, data.query_ids,
             f"queries of {queries}" if queries is not None else f"queries {qrels} judges")
    choices = params_writer.Choices(
        _relative(qrels, dest), team, baseline, candidate,
        queries=None if queries is None else _relative(queries, dest))
    return params_writer.runs_only(data, choices)


def params_for(dest: Path, *, corpus: Path | None, interactions: Path | None,
               runs: dict[str, Path], baseline: str | None, candidate: str | None,
               feedback: Path | None = None, reference: Path | None = None,
               qrels: Path | None = None, queries: Path | None = None) -> str:
    """params.yaml's text for the data (read and checked here), validated as params;
    ``feedback``: a log of bandit feedback (``reference``: the candidate policy's own);
    ``qrels``: no corpus, the team's ``runs`` judged by them (``queries``: a queries file)."""
    if [corpus, interactions, feedback, qrels].count(None) != 3:
        raise DataChoice("releval init")
    if reference is not None and feedback is None:
        raise InputError("a reference log goes with logged feedback", str(reference))
    if queries is not None and qrels is None:
        raise InputError("a queries file goes with qrels and runs without a corpus (a corpus "
                         "names its own queries)", str(queries))
    team = _runs(runs, dest)
    if qrels is not None:
        text = _judged_runs(dest, qrels, queries, runs, team, baseline, candidate)
    elif corpus is not None:
        data = profile.of_collection(corpus)
        _matched(runs, team, data.query_ids, f"queries of {corpus}")
        choices = params_writer.Choices(_relative(corpus, dest), team, baseline, candidate)
        text = params_writer.retrieval(data, choices)
    elif interactions is not None:
        log = profile.of_log(interactions)
        _matched(runs, team, log.user_ids, f"users of {interactions}", users=True)
        choices = params_writer.Choices(_relative(interactions, dest), team, baseline,
                                        candidate)
        text = params_writer.recommendation(log, choices)
    else:
        if reference is not None:
            profile.of_feedback(reference)  # refused here, as prepare would
        fb = profile.of_feedback(feedback)
        _matched(runs, team, fb.log.user_ids, f"users of {feedback}", users=True)
        choices = params_writer.Choices(
            _relative(feedback, dest), team, baseline, candidate,
            None if reference is None else _relative(reference, dest))
        text = params_writer.recommendation(fb.log, choices, fb)
    parse_params(yaml.safe_load(text), "params.yaml")
    return text


def _git(dest: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GIT, *args], cwd=dest, capture_output=True, text=True)


def _scm(dest: Path) -> list[str]:
    """git and DVC around the project: a new repository (committed) unless ``dest`` is in
    one already (then left for the team to commit); DVC with its local default remote."""
    inside = _git(dest, "rev-parse", "--show-toplevel")
    created = inside.returncode != 0
    if created:
        _git(dest, "init", "-q")
    top = Path(_git(dest, "rev-parse", "--show-toplevel").stdout.strip())
    subdir = [] if top.resolve() == dest.resolve() else ["--subdir"]
    done = subprocess.run([sys.executable, "-m", "dvc", "init", "-q", *subdir], cwd=dest,
                          capture_output=True, text=True)
    if done.returncode:
        raise InputError(f"dvc init failed: {(done.stderr or done.stdout).strip()}", str(dest))
    (dest / ".dvc" / "config").write_text(DVC_CONFIG)
    if not created:
        return [f"{dest}: inside the git repository {top}: commit the project when ready"]
    _git(dest, "add", "-A")
    commit = _git(dest, "commit", "-qm", "releval init")
    if commit.returncode:
        return [f"git commit failed ({commit.stderr.strip()}): commit the project yourself"]
    return [f"{dest}: a new git repository, committed"]


def init(dest: Path, *, corpus: Path | None = None, interactions: Path | None = None,
         runs: dict[str, Path] | None = None, baseline: str | None = None,
         candidate: str | None = None, example: str | None = None,
         feedback: Path | None = None, reference: Path | None = None,
         qrels: Path | None = None, queries: Path | None = None) -> list[str]:
    """Create the project at ``dest`` (module docstring) from the data, or from one of the
    shipped examples that generate their own (``example``: demo.yaml, recsys-demo.yaml);
    one line per thing done. Its dvc.yaml is the shipped DAG for its params
    (``template.project_dag``: without fusion no fuse stage)."""
    from releval.extras import require

    require("pipeline", "releval init")
    taken = [name for name in WRITES if (dest / name).exists()]
    if taken:
        raise InputError(f"already holds {', '.join(taken)}: releval init writes a new "
                         "project", str(dest))
    if example:
        params = (template.root() / "examples" / example).read_text()
    else:
        params = params_for(dest, corpus=corpus, interactions=interactions, runs=runs or {},
                            baseline=baseline, candidate=candidate, feedback=feedback,
                            reference=reference, qrels=qrels, queries=queries)
    parsed = parse_params(yaml.safe_load(params), "params.yaml")
    dest.mkdir(parents=True, exist_ok=True)
    if example:  # the demo's params name its pinned fixture
        shutil.copytree(template.root() / "examples" / "fixture", dest / "examples" / "fixture")
    (dest / "dvc.yaml").write_text(template.project_dag_text(parsed))
    (dest / "params.yaml").write_text(params)
    (dest / template.CODE_FILE).parent.mkdir()
    (dest / template.CODE_FILE).write_text("")
    template.refresh(dest)
    (dest / ".gitignore").write_text(GITIGNORE)
    (dest / ".dvcignore").write_text(DVCIGNORE)
    what = (f"the generated data of examples/{example}" if example else
            f"the runs {', '.join(runs or {})} judged by {qrels} (no corpus), evaluated with "
            f"releval {template.version()}" if qrels else
            f"{corpus or interactions or feedback} evaluated with releval "
            f"{template.version()}")
    (dest / "README.md").write_text(README.format(name=dest.resolve().name, what=what))
    return [f"{dest}: dvc.yaml, params.yaml (from {example or 'the data'}), "
            ".releval/code.yaml, .gitignore, README.md", *_scm(dest)]

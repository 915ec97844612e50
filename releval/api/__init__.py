"""The public Python API (docs/api.md): what a notebook or a team's own pipeline calls, without
the command line and without a project.

``releval.read_qrels`` / ``releval.read_run`` (``inputs``) → ``Qrels``, ``Run``;
``releval.evaluate`` (``evaluation``) → ``Results``; ``releval.compare`` (``comparison``) →
``Comparison``; ``releval.gate`` (``gating``) → ``Decision``; ``releval.plan`` (``planning``)
→ ``Plan``. Each is a thin layer over the library the pipeline and the commands run (the
readers, the metrics engine, the paired comparison, the gate on files, the power plan), so its
numbers are theirs. Each result has ``to_frame()``, ``to_json()`` and ``_repr_html_()``
(``display``).

``releval`` exposes these names lazily (``releval.__getattr__``): importing ``releval``
imports nothing here.
"""

"""agreement_auto.json (stage ``autojudge``): automatic labels validated against the human ones.

``configured`` False: no automatic judge (``judgments.automatic`` null), with the ``note``
saying so and every other part null. Otherwise: the ``judge`` (name, model, kind, the
built-in judge's encoder and ``thresholds``), the ``sample`` (the validation queries the
judge is fitted on and PPI's labelled sample; the held-out queries whose human labels are
the ground truth), the label sets and the share of each source (``labels``), Judged@k per
system under each label set (``judged``), the agreement on the held-out pairs both judged
(``agreement``: confusion, κ, α with CIs, per query), every system's measures under human
and automatic labels (``systems``), the ranking agreement per measure (``ranking``), PPI
intervals per measure × system beside the human-only and the automatic-only figures
(``ppi``), the compared pair's PPI intervals of the difference (``difference``), and the
holes filled (``holes``).
"""

from __future__ import annotations

from typing import Any

from releval.documents import Document

Part = dict[str, Any] | None


class AgreementAuto(Document):
    configured: bool
    note: str | None = None
    judge: Part = None
    sample: Part = None
    labels: Part = None
    judged: Part = None
    agreement: Part = None
    systems: Part = None
    ranking: Part = None
    ppi: Part = None
    difference: Part = None
    holes: Part = None

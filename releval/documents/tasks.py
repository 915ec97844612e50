"""label_studio_tasks.json (stage ``pool``): a JSON list, one Label Studio task per pair left
to judge (``releval.judging.pooling.label_studio_tasks``)."""

from __future__ import annotations

from pydantic import RootModel

from releval.documents import Checked, Fixed


class Task(Fixed):
    blind_id: str
    pool_id: str
    query: str
    title: str
    text: str
    guideline: str


class Item(Fixed):
    data: Task


class Tasks(Checked, RootModel[list[Item]]):
    pass

"""The base of every params model: unknown keys are errors (a typo never falls back to a
default silently) and a loaded model is frozen."""

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

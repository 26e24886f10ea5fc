"""Analyses that answer questions: what a run learned, where rollout time went, what looks wrong.

Pure functions from the model (:mod:`sitegen.model.parsed`) to frozen Structs, which
:func:`sitegen.jsonio.dumps` writes as JSON. Thresholds and rules are in docs/data.md
("What the insights mean")."""

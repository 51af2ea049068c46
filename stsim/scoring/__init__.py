"""How a score is computed: per-item scores and summaries (:mod:`.score`), the metrics
(:mod:`.metrics`: trimmed RMSE as STARK §4.1), gold-answer audits (:mod:`.audit`,
:mod:`.audit_relations`), run comparisons (:mod:`.compare`) and reports (:mod:`.report`,
:mod:`.cardinal_report`).  See ``docs/architecture.md``."""

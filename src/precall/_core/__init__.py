"""The numpy-only core: it imports nothing from the rest of precall.

``validate`` (the one front door: inputs and options) -> ``sort`` (the one sort)
-> ``steps`` (the step representation, with a batch axis) -> ``conventions``
(the registry and one kernel per convention, ROC-AUC) -> ``evaluation`` (every
number of one problem).  ``undefined`` holds the warning class and the policy.
"""

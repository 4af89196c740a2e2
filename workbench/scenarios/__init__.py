"""Scenario files: set up the sandbox's state in one step, from YAML or JSON.

``workbench fixtures FILE`` and the pytest plugin's ``workbench_fixtures`` run one: named
steps (create a session, charge, preauthorize, capture, void, refund, subscribe, advance
the clock, set the webhook), each able to use earlier results (``${charge.id}``). The
whole file is checked before the first step runs (`load_scenario`); a step the service
refuses stops the run with its envelope (`StepFailed`).

The package ships examples (`EXAMPLES`), which ``workbench fixtures NAME`` runs by name:
a subscription past due after two failed retries, a refund in flight, a 3-D Secure
challenge left to time out, a checkout session expired unpaid.
"""

from pathlib import Path

from workbench.scenarios._load import ACTIONS, Action, Scenario, ScenarioError, Step, load_scenario
from workbench.scenarios._run import StepFailed, StepResult, run_scenario

__all__ = [
    "ACTIONS",
    "EXAMPLES",
    "Action",
    "Scenario",
    "ScenarioError",
    "Step",
    "StepFailed",
    "StepResult",
    "load_scenario",
    "run_scenario",
]

#: The shipped scenario files, by name (the file's stem).
EXAMPLES: dict[str, Path] = {
    path.stem: path for path in sorted((Path(__file__).parent / "examples").glob("*.yaml"))
}

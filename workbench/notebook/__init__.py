"""What only the flow notebooks use, apart from the client: their form and their runner.

Nothing here is needed to call the service; it needs the ``notebooks`` extra
(ipywidgets, nbclient):

- `workbench.notebook.widgets`: the form over a flow (inputs, a Run button, the calls);
- `workbench.notebook.runner`: executes the notebooks headless (``workbench run``);
- `workbench.notebook.shipped`: the notebooks shipped with the package, and copies of
  them (``workbench lab``).

The client's own views of its results stay beside it: `workbench.frames` (a result
model's ``to_frame()``) and `workbench.tracking` (the call log the flows draw).
The package imports none of its modules: each is imported where it is used.
"""

__all__: list[str] = []

"""Reports of a flow run for CI and for people: JUnit XML (``junit``) and an HTML page (``html``),
both built from the same ``FlowOutcome``s (``model``) that ``recorder`` collects from the calls."""

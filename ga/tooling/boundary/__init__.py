"""The boundary: what the model's calls may not reach, and what a run may not be talked out of.

- hidden.py: places never shown to the model (credential stores, histories, GA_HOME, the local model's key); the
  sandbox masks them and the file tools refuse them. A new secret place goes there.
- protected.py: places where a write takes effect later, outside the run (git's metadata, ga's own code and
  configuration, HOME's start-up files): a write needs a human's approval. A new protected place goes there.
- confined.py: how the file tools open what the check allowed, by descriptor, so a link that moves cannot lead out.
- check_env.py (with check_site/): the --check's Python, where no workspace module stands in for the judge.
- trust.py: the settings a run started with, kept by its resume (state.json lies in GA_HOME, out of reach).

The command policy and the sandbox that enforce much of this for code_run are tools/guard/; ga/tooling/permissions.py
confines paths to the workspace and the allowed folders."""

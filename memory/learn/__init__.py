"""Scripts learnt from checked runs: the run's work steps (steps), the task's values lifted into parameters
(literals, script, lift_python, lift_shell), kept only when a replay in the sandbox reproduces the run (extract,
snapshot, replay), and saved as a script SOP (learnt)."""

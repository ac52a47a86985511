"""What guards code_run: the command policy (shell and Python scans, rules), the approval of a dangerous command by
a human or the policy file, and the bubblewrap sandbox. The policy is the approval and warning layer; the sandbox
is the boundary."""

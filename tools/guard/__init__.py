"""What guards code_run: the command policy (scanner, shell and Python scans, rules), the approval of a
dangerous command by a human or the policy file, and the bubblewrap sandbox."""

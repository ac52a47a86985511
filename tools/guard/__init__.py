"""What guards code_run: the bubblewrap sandbox (the boundary), the command policy (an accident list: policy.py,
rules.py, python_forms.py) and the approval of a dangerous command by a human or the policy file (approval.py)."""

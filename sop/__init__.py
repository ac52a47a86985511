"""The SOP library: Agent Skills format, ledger, retrieval, seed SOPs."""

"""Long-term memory: the L1 index, L2 facts, L4 run archives, scripts learnt from verified runs, the memory rules."""

"""What the file tools share: reading, writing and stamping files (fileio.py; their confined opening is
ga/tooling/boundary/confined.py), and where file_patch's old text is in a file (matching.py)."""

"""The embedded default model: Qwen2.5-Coder-1.5B-Instruct on llama.cpp's server, provisioned once into the user's
cache (provision.py), served on 127.0.0.1 for one run (server.py), inspected with `python run.py models` (cli.py)."""

"""The top --help's epilog: where the environment variables are described, and the exit codes."""

EXIT_CODES = """exit codes:
  0    done
  1    failed or gave up
  2    usage or configuration error
  3    paused, waiting for a human: --resume RUN_ID --answer "..."
  4    a limit was reached (turns, tokens, time)
  130  interrupted (Ctrl-C or SIGTERM); the run is saved: --resume RUN_ID continues it"""
ENVIRONMENT = """environment: OPENAI_BASE_URL, OPENAI_API_KEY and GA_MODEL name the endpoint and the model; GA_HOME
(default ~/.ga) holds ga's data. Every variable ga reads: docs/configuration.md"""

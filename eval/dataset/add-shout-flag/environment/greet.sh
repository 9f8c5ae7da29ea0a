#!/bin/sh
# greet.sh NAME: says hello.
echo "hello $1"

#!/bin/bash
wc -w < notes.txt | tr -d ' ' > count.txt

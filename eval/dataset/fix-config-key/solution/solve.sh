#!/bin/bash
sed -i 's/"prot"/"port"/' server.py

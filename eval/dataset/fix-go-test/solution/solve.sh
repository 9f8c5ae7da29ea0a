#!/bin/bash
sed -i 's/for i := 1; i < len(xs); i++ {/for i := 0; i < len(xs); i++ {/' sum.go

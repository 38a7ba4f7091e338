#!/usr/bin/env bash
# Regenerates the tables of docs/tutorials/compare.md: EASY, conservative, strict
# SJF and EASY-SJBF on 10 slices of SDSC-SP2 and CTC-SP2 (the traces from
# $DISPATCHLAB_TRACES, else ../shared/traces beside the repository).
# Run from the repository root after `make demo` (or with dispatchlab on PATH).
set -euo pipefail
TRACES=${TRACES:-${DISPATCHLAB_TRACES:-../shared/traces}}
DL=${DL:-.venv/bin/dispatchlab}
OUT=${OUT:-out/compare}
run() {  # trace file, measured jobs per slice, output folder
    "$DL" compare "$TRACES/$1" --dispatcher easy --dispatcher conservative --dispatcher sjf \
        --dispatcher easy:order=sjf --slices 10 --slice-jobs "$2" --baseline easy --out "$OUT/$3"
}
# SDSC-SP2 has 54,044 cleaned jobs: 10 x (450 + 4,500) fit, 10 x (500 + 5,000) do not
run SDSC-SP2-1998-4.2-cln.swf.gz 4500 sdsc-sp2
run CTC-SP2-1996-3.1-cln.swf.gz 5000 ctc-sp2

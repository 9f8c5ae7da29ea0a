#!/bin/bash
cat > report.sh <<'SH'
#!/bin/sh
# report.sh CSV: each region's total amount, the largest first.
awk -F, 'NR > 1 { t[$2] += $3 } END { for (r in t) printf "%s %.2f\n", r, t[r] }' "$1" | sort -k2,2nr -k1,1
SH

package eval

// PassAtK is the unbiased estimator of pass@k from n trials of which c
// passed (Chen et al., 2021): the chance that at least one of k trials
// drawn from the n passes, 1 - C(n-c, k) / C(n, k). It is 0 for n < k.
func PassAtK(n, c, k int) float64 {
	if n < k || k <= 0 {
		return 0
	}
	if n-c < k {
		return 1
	}
	// C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i)
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

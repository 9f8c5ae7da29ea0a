module example.com/sum

go 1.21

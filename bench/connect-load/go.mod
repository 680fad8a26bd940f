module pinproxy.bench/connect-load

go 1.19

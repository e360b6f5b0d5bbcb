module timerbench/engines/go

go 1.19

module github.com/asynkron/protoactor-go

go 1.21

require (
	github.com/Workiva/go-datastructures v1.1.3
	github.com/stretchr/testify v1.12.1
	google.golang.org/protobuf v1.33.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/stretchr/objx v0.5.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

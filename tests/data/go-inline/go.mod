module inl

go 1.19

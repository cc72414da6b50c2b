  myprobe                                                    2               0

  myprobe                                                    2               0
  myretprobe                                                 2               0
